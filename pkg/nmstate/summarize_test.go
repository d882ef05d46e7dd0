package nmstate

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummarize(t *testing.T) {
	terminating := errors.New(`namespaces "openshift-nmstate" is being terminated`)
	apply := func(kind, name string, cause error) error {
		return fmt.Errorf("applying %s openshift-nmstate/%s: %w", kind, name, cause)
	}
	var twelve []error
	for i := range 12 {
		twelve = append(twelve, apply("ServiceAccount", fmt.Sprintf("sa-%d", i), terminating))
	}
	var many []error
	for i := range 100 {
		many = append(many, apply("ConfigMap", fmt.Sprintf("cm-%d", i), fmt.Errorf("quota %d exceeded", i)))
	}
	huge := errors.New(strings.Repeat("x", 5000))

	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a plain error is itself", errors.New("connection refused"), "connection refused"},
		{"a wrapped error keeps its context", apply("DaemonSet", "nmstate-handler", terminating),
			`applying DaemonSet openshift-nmstate/nmstate-handler: namespaces "openshift-nmstate" is being terminated`},
		{"one entry per cause, the rest counted", errors.Join(twelve...),
			`applying ServiceAccount openshift-nmstate/sa-0 (and 11 more like it): namespaces "openshift-nmstate" is being terminated`},
		{"distinct causes in order of first appearance",
			errors.Join(apply("Service", "a", terminating), errors.New("connection refused"), apply("Service", "b", terminating)),
			"applying Service openshift-nmstate/a (and 1 more like it): namespaces \"openshift-nmstate\" is being terminated; connection refused"},
		{"causes that differ only in the object named are one", errors.Join(
			apply("DaemonSet", "nmstate-handler", errors.New(`daemonsets.apps "nmstate-handler" is forbidden: unable to create new content in namespace openshift-nmstate because it is being terminated`)),
			apply("ServiceAccount", "nmstate-handler", errors.New(`serviceaccounts "nmstate-handler" is forbidden: unable to create new content in namespace openshift-nmstate because it is being terminated`)),
			apply("Service", "nmstate-webhook", errors.New(`services "nmstate-webhook" is forbidden: exceeded quota: "compute"`))),
			"applying DaemonSet openshift-nmstate/nmstate-handler (and 1 more like it): daemonsets.apps \"nmstate-handler\" is forbidden: unable to create new content in namespace openshift-nmstate because it is being terminated; " +
				`applying Service openshift-nmstate/nmstate-webhook: services "nmstate-webhook" is forbidden: exceeded quota: "compute"`},
		{"nested joins are flattened", errors.Join(errors.Join(terminating, terminating), terminating),
			`namespaces "openshift-nmstate" is being terminated (and 2 more like it): namespaces "openshift-nmstate" is being terminated`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, summarize(tt.err))
		})
	}

	t.Run("bounded, with the count of what was left out", func(t *testing.T) {
		got := summarize(errors.Join(many...))
		assert.LessOrEqual(t, len(got), maxErrorText)
		lines := strings.Split(got, causeSeparator)
		last := lines[len(lines)-1]
		assert.Equal(t, fmt.Sprintf("(and %d more distinct errors)", 100-(len(lines)-1)), last)
		assert.Equal(t, "applying ConfigMap openshift-nmstate/cm-0: quota 0 exceeded", lines[0])
	})
	t.Run("one huge cause is cut", func(t *testing.T) {
		got := summarize(errors.Join(huge, errors.New("second")))
		assert.LessOrEqual(t, len(got), maxErrorText)
		assert.True(t, strings.HasPrefix(got, "xxx"), got[:10])
		assert.Contains(t, got, "...")
	})

	// The bounds, byte for byte: a cause may take summaryRoom-2 bytes, all
	// causes with their separators summaryRoom.
	t.Run("a cause that just fits is kept whole", func(t *testing.T) {
		cause := strings.Repeat("y", summaryRoom-2)
		assert.Equal(t, cause, summarize(errors.New(cause)))
	})
	t.Run("a byte more and it is cut to fit", func(t *testing.T) {
		got := summarize(errors.New(strings.Repeat("y", summaryRoom-1)))
		assert.Equal(t, strings.Repeat("y", summaryRoom-5)+"...", got)
	})
	t.Run("two causes that just fit are both kept", func(t *testing.T) {
		a, b := strings.Repeat("a", 500), strings.Repeat("b", summaryRoom-504)
		assert.Equal(t, a+"; "+b, summarize(errors.Join(errors.New(a), errors.New(b))))
	})
	t.Run("a byte more and the second is counted", func(t *testing.T) {
		a, b := strings.Repeat("a", 500), strings.Repeat("b", summaryRoom-503)
		assert.Equal(t, a+"; (and 1 more distinct errors)", summarize(errors.Join(errors.New(a), errors.New(b))))
	})
	t.Run("no newline, whatever the causes", func(t *testing.T) {
		assert.Equal(t, "admission webhook denied the request: a b; second",
			summarize(errors.Join(errors.New("admission webhook denied the request: a\nb"), errors.New("second"))))
	})
}
