package main

import (
	"os"
	"testing"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

// TestMain runs the tests in a network namespace of their own, as the demo
// runs: TestDemo's simulated pods have addresses only that namespace reaches.
func TestMain(m *testing.M) {
	if code, reexeced := devcluster.RunIsolated(false); reexeced {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
