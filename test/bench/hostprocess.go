package main

// The host in a process of its own (./hostproc), so that its memory is read
// apart from the bench's clients, the API server and everything else.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/prometheus/procfs"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// hostMemory is what a host process holds once settled.
type hostMemory struct {
	rssMB  float64 // VmRSS, as the kernel (and an OOM killer) sees it
	heapMB float64 // runtime.MemStats.HeapInuse after a GC: what the caches keep alive
}

type hostProcess struct {
	proc  *podproc.Process
	pid   int
	ask   io.WriteCloser
	pipe  *os.File // the read end of fd 3
	reply *bufio.Scanner
}

// buildHostProc builds ./hostproc into dir.
func buildHostProc(root, dir string) (string, error) {
	bin := filepath.Join(dir, "hostproc")
	cmd := exec.Command("go", "build", "-o", bin, "./test/bench/hostproc")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building test/bench/hostproc: %w: %s", err, out)
	}
	return bin, nil
}

// startHostProcess runs the host (with controller-runtime's default cache
// when defaultCache) and waits for its first successful reconcile. Its
// images come from the environment, as CNO's do, and match what the bench's
// in-process host renders, so the two never undo each other's applies.
func startHostProcess(bin, kubeconfig, manifests, logPath string, defaultCache bool) (*hostProcess, error) {
	cmd := exec.Command(bin, "-manifests", manifests, "-default-cache="+strconv.FormatBool(defaultCache))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig,
		nmstate.EnvHandlerImage+"="+image, nmstate.EnvReleaseVersion+"="+releaseVersion)
	ask, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("host process stdin: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("host process reply pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{w}
	name := filepath.Base(logPath)
	p, err := podproc.Run(name, cmd, logPath)
	// Only the child may hold the write end: its exit then ends what we read.
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	h := &hostProcess{proc: p, pid: cmd.Process.Pid, ask: ask, pipe: r, reply: bufio.NewScanner(r)}
	if line, err := h.read(); err != nil || line != "ready" {
		h.stop()
		return nil, fmt.Errorf("%s did not get ready (%q, %v); its log:\n%s", name, line, err, p.Log())
	}
	return h, nil
}

func (h *hostProcess) read() (string, error) {
	if !h.reply.Scan() {
		if err := h.reply.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return h.reply.Text(), nil
}

// measure reads the process's RSS as it is, then asks it for its heap.
func (h *hostProcess) measure() (hostMemory, error) {
	proc, err := procfs.NewProc(h.pid)
	if err != nil {
		return hostMemory{}, fmt.Errorf("reading /proc of %s: %w", h.proc.Name, err)
	}
	status, err := proc.NewStatus()
	if err != nil {
		return hostMemory{}, fmt.Errorf("reading /proc/%d/status of %s: %w", h.pid, h.proc.Name, err)
	}
	if _, err := fmt.Fprintln(h.ask, "heap"); err != nil {
		return hostMemory{}, fmt.Errorf("asking %s for its heap: %w", h.proc.Name, err)
	}
	line, err := h.read()
	if err != nil {
		return hostMemory{}, fmt.Errorf("reading %s's heap: %w; its log:\n%s", h.proc.Name, err, h.proc.Log())
	}
	heap, err := strconv.ParseUint(line, 10, 64)
	if err != nil {
		return hostMemory{}, fmt.Errorf("%s answered %q for its heap: %w", h.proc.Name, line, err)
	}
	return hostMemory{rssMB: float64(status.VmRSS) / (1 << 20), heapMB: float64(heap) / (1 << 20)}, nil
}

func (h *hostProcess) stop() error {
	h.ask.Close()
	err := h.proc.Stop()
	h.pipe.Close()
	return err
}
