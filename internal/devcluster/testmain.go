package devcluster

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

// leftoverGrace is how long a process group that was just stopped may take
// to be gone: a member that got SIGTERM with its leader may still be exiting.
const leftoverGrace = 10 * time.Second

// RunTests is a test binary's TestMain: it runs the tests in a network
// namespace of their own (RunIsolated), then fails the binary if a process
// the tests started, by podproc or by a Cluster, still runs after them
// (and kills it): the tests' own records say which, so nothing else on
// the machine is looked at. m is the testing.M.
func RunTests(m interface{ Run() int }) int {
	if code, reexeced := RunIsolated(false); reexeced {
		return code
	}
	code := m.Run()
	left := podproc.Leftovers()
	for deadline := time.Now().Add(leftoverGrace); len(left) > 0 && time.Now().Before(deadline); left = podproc.Leftovers() {
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) == 0 {
		return code
	}
	var killed []error
	for _, t := range left {
		killed = append(killed, t.Kill())
	}
	fmt.Fprintf(os.Stderr, "FAIL: processes the tests started still ran %s after the last test ended:\n%v\n", leftoverGrace, errors.Join(killed...))
	return 1
}
