//go:build cnoe2e

package cnoe2e

import (
	"os"
	"testing"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

// TestMain runs the scenarios in a network namespace of their own, as
// test/e2e does: CNO, the control plane, kwok and the operands' processes
// share a loopback-only network that reaches nothing else. It fails them if
// a process they started outlives them.
func TestMain(m *testing.M) {
	os.Exit(devcluster.RunTests(m))
}
