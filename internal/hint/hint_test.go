package hint

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCase(t *testing.T) {
	platforms := []string{"BareMetal", "VSphere", "None"}
	for _, tt := range []struct{ value, want string }{
		{"baremetal", ` (values are case-sensitive: did you mean "BareMetal"?)`},
		{"VSPHERE", ` (values are case-sensitive: did you mean "VSphere"?)`},
		{"Mainframe", ""},
		{"", ""},
	} {
		assert.Equal(t, tt.want, Case(tt.value, platforms), tt.value)
	}
	modes := []string{"Enabled", "Disabled"}
	assert.Equal(t, ` (values are case-sensitive: did you mean "Disabled"?)`, Case("disabled", modes))
	assert.Empty(t, Case("Enabled ", modes), "a hint only when nothing but case differs")
}
