package main

import (
	"os"
	"testing"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

// TestMain runs the tests in a network namespace of their own, as the demo
// runs: TestDemo's simulated pods have addresses only that namespace reaches.
// It fails them if a process they started outlives them.
func TestMain(m *testing.M) {
	os.Exit(devcluster.RunTests(m))
}
