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
// machine), and sends the host's logs to stderr, which `go test` shows for
// a failing test (and always with -v).
func TestMain(m *testing.M) {
	if code, reexeced := devcluster.RunIsolated(false); reexeced {
		os.Exit(code)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	os.Exit(m.Run())
}
