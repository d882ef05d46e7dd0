package e2e

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

// TestMain runs the tests in a network namespace of their own (the
// simulated pods' addresses are local there and nothing can leave the
// machine), sends the host's logs to stderr, which `go test` shows for a
// failing test (and always with -v), and fails the tests if a process they
// started outlives them.
func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	os.Exit(devcluster.RunTests(m))
}
