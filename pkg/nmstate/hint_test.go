package nmstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCaseHint(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"baremetal", ` (values are case-sensitive: did you mean "BareMetal"?)`},
		{"VSPHERE", ` (values are case-sensitive: did you mean "VSphere"?)`},
		{"Mainframe", ""},
		{"", ""},
	} {
		assert.Equal(t, tt.want, CaseHint(tt.value, KnownPlatforms), tt.value)
	}
	assert.Equal(t, ` (values are case-sensitive: did you mean "Disabled"?)`, CaseHint("disabled", validModes))
	assert.Empty(t, CaseHint("Enabled ", validModes), "a hint only when nothing but case differs")
}
