//go:build cnoe2e

package cnoe2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/test/cnoe2e/costreport"
)

// TestMain runs the scenarios in a network namespace of their own, as
// test/e2e does: CNO, the control plane, kwok and the operands' processes
// share a loopback-only network that reaches nothing else. It fails them if
// a process they started outlives them. When TestWhatThePatchCosts and
// TestRetryAfterFailedApplies passed it prints their summary lines and, with
// CNO_E2E_WRITE_DOC set to the repository's root, writes their figures into
// costreport.BudgetDoc.
func TestMain(m *testing.M) {
	code := devcluster.RunTests(m)
	if code == 0 && measured != nil && retried != nil {
		measured.Retry = *retried
		fmt.Print(measured.Summary())
		if root := os.Getenv("CNO_E2E_WRITE_DOC"); root != "" {
			if err := costreport.Section.Write(filepath.Join(root, costreport.BudgetDoc), measured.DocSection()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}
	}
	os.Exit(code)
}
