package devcluster

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

func TestMain(m *testing.M) {
	os.Exit(RunTests(m))
}

// tests stands in for a testing.M: its Run is what the tests do.
type tests func() int

func (f tests) Run() int { return f() }

// startGroup starts a sleep in a process group of its own, as envtest
// starts etcd, and records it.
func startGroup(t *testing.T, name string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	_, ok := podproc.Track(name, cmd.Process.Pid)
	require.True(t, ok)
	return cmd
}

func TestRunTests(t *testing.T) {
	t.Run("a process left running fails the tests and is killed", func(t *testing.T) {
		var cmd *exec.Cmd
		code := RunTests(tests(func() int {
			cmd = startGroup(t, "left by a test")
			return 0
		}))
		assert.Equal(t, 1, code)
		assert.Error(t, cmd.Wait(), "killed")
	})
	t.Run("processes stopped by the tests", func(t *testing.T) {
		code := RunTests(tests(func() int {
			cmd := startGroup(t, "stopped by its test")
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			_ = cmd.Wait()
			return 0
		}))
		assert.Equal(t, 0, code)
	})
	t.Run("the tests' own code is kept", func(t *testing.T) {
		assert.Equal(t, 3, RunTests(tests(func() int { return 3 })))
	})
}
