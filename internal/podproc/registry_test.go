package podproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leftoverNamed are the Leftovers of the processes recorded as name.
func leftoverNamed(name string) []Tracked {
	var out []Tracked
	for _, t := range Leftovers() {
		if t.Name == name {
			out = append(out, t)
		}
	}
	return out
}

func TestLeftovers(t *testing.T) {
	// The leader exits at once; the sleep it started stays in its group.
	name := "leaves-a-sleep-" + t.Name()
	p, err := Run(name, exec.Command("sh", "-c", "sleep 60 & exit 0"), filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	select {
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the leader did not exit")
	case err := <-p.done:
		require.NoError(t, err)
	}
	left := leftoverNamed(name)
	require.Len(t, left, 1, "a group member outlives its leader: still a leftover")
	err = left[0].Kill()
	require.Error(t, err)
	assert.Contains(t, err.Error(), name+" (process group")
	require.Eventually(t, func() bool { return len(leftoverNamed(name)) == 0 }, 10*time.Second, 50*time.Millisecond,
		"Kill left %v", leftoverNamed(name))
}

func TestStoppedIsNoLeftover(t *testing.T) {
	name := "stopped-" + t.Name()
	p, err := Run(name, exec.Command("sleep", "60"), filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	require.Len(t, leftoverNamed(name), 1, "running")
	require.NoError(t, p.Stop())
	assert.Empty(t, leftoverNamed(name), "stopped and reaped")
}

func TestTrackedKill(t *testing.T) {
	// Started as envtest starts etcd: a group of its own, not by Run.
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	path, err := exec.LookPath("sleep")
	require.NoError(t, err)
	assert.Contains(t, Children(path), cmd.Process.Pid, "found among this process's children by its binary")

	tracked, ok := Track("a sleep", cmd.Process.Pid)
	require.True(t, ok)
	require.Len(t, leftoverNamed("a sleep"), 1)
	err = tracked.Kill()
	require.Error(t, err, "it was running")
	assert.Contains(t, err.Error(), "a sleep (process group")
	assert.Error(t, cmd.Wait(), "killed")
	assert.Empty(t, leftoverNamed("a sleep"))
	assert.NoError(t, tracked.Kill(), "nothing left to kill")

	_, ok = Track("gone", 1<<30)
	assert.False(t, ok, "no such process")
}

func TestKillRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records")
	t.Setenv(RecordsEnv, path)
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	_, ok := Track("recorded sleep", cmd.Process.Pid)
	require.True(t, ok)
	// What a process that died mid-write leaves: a line cut short.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("123")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	err = KillRecorded(path)
	require.Error(t, err, "it was running")
	assert.Contains(t, err.Error(), "recorded sleep (process group")
	assert.Error(t, cmd.Wait(), "killed")
	assert.NoError(t, KillRecorded(path), "nothing left")
	assert.NoError(t, KillRecorded(filepath.Join(t.TempDir(), "none")), "no records, nothing started")
}
