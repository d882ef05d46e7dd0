package devcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

// The simulated cluster's addresses. Pods get addresses in podCIDR and
// every node reports nodeIP; inside the network namespace RunIsolated sets
// up, the whole range is local (an AnyIP route on lo), so a process that
// stands in for a pod's container receives what is sent to its pod's
// address, and nothing sent to any of them can leave the machine. The API
// server refuses loopback (127/8) endpoints, which is why the range is not
// loopback itself.
const (
	localCIDR = "10.88.0.0/16"
	podCIDR   = "10.88.0.0/17"
	nodeIP    = "10.88.128.1"
)

const (
	// isolatedEnv marks a process that already runs in its own namespace.
	isolatedEnv = "CNO_NMSTATE_ISOLATED_NETWORK"
	// apiAddrFileEnv names the file where Start writes the API server's
	// address for RunIsolated to forward it.
	apiAddrFileEnv = "CNO_NMSTATE_API_ADDRESS_FILE"
)

// RunIsolated makes the program run in a network namespace of its own,
// with only a loopback interface: the control plane, the simulated nodes
// and the operands' processes then share a network no one else can reach
// and that reaches nothing else. Called first thing by a program (or a
// TestMain): in the original process it runs the same command again in a
// new namespace and returns its exit code with reexeced true; in that
// second process it sets the namespace's network up and returns reexeced
// false, and the program goes on. It needs root, or user namespaces, and
// iproute2's ip.
//
// With forwardAPI, the first API server the program starts is also served
// on the same loopback address outside the namespace, so that a user's
// kubectl reaches it with the kubeconfig the program writes (the demo).
//
// The second process records what it starts (podproc.RecordsEnv); once it
// has exited, however it ended, the first kills what of that still runs and
// says so, and fails.
func RunIsolated(forwardAPI bool) (code int, reexeced bool) {
	if os.Getenv(isolatedEnv) != "" {
		if err := setUpNetwork(); err != nil {
			fmt.Fprintf(os.Stderr, "setting up the isolated network: %v\n", err)
			return 1, true
		}
		return 0, false
	}
	args := []string{"--net"}
	if os.Geteuid() != 0 {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "finding this program to run it in its own network namespace: %v\n", err)
		return 1, true
	}
	cmd := exec.Command("unshare", append(append(args, "--", self), os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	records, err := os.CreateTemp("", "process-records-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "creating the process records: %v\n", err)
		return 1, true
	}
	records.Close()
	defer os.Remove(records.Name())
	cmd.Env = append(os.Environ(), isolatedEnv+"=1", podproc.RecordsEnv+"="+records.Name())
	defer func() {
		if err := podproc.KillRecorded(records.Name()); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: what the isolated process started outlived it: %v\n", err)
			code = max(code, 1)
		}
	}()
	var addrFile string
	if forwardAPI {
		f, err := os.CreateTemp("", "api-address-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "creating the API address file: %v\n", err)
			return 1, true
		}
		f.Close()
		addrFile = f.Name()
		defer os.Remove(addrFile)
		cmd.Env = append(cmd.Env, apiAddrFileEnv+"="+addrFile)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "running in a network namespace of its own (unshare %v): %v\n", args, err)
		return 1, true
	}
	stop := make(chan struct{})
	defer close(stop)
	if forwardAPI {
		go forwardAPIServer(cmd.Process.Pid, addrFile, stop)
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), true
		}
		fmt.Fprintf(os.Stderr, "running in a network namespace of its own: %v\n", err)
		return 1, true
	}
	return 0, true
}

// forwardAPIServer waits for the address the isolated process writes, then
// listens on it here and carries each connection into the process's
// network namespace.
func forwardAPIServer(pid int, addrFile string, stop <-chan struct{}) {
	var addr string
	for addr == "" {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		b, _ := os.ReadFile(addrFile)
		addr = strings.TrimSpace(string(b))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubectl outside the demo's network cannot reach its API server: %v\n", err)
		return
	}
	go func() { <-stop; ln.Close() }()
	for {
		out, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer out.Close()
			in, err := dialInNamespace(pid, addr)
			if err != nil {
				return
			}
			defer in.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
			go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
			<-done
		}()
	}
}

// dialInNamespace connects to addr from inside the network namespace of
// process pid. The goroutine's thread switches namespace and is never
// unlocked, so it ends with the goroutine and no other goroutine runs there.
func dialInNamespace(pid int, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			ch <- result{err: fmt.Errorf("opening the namespace: %w", err)}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("entering the namespace: %w", err)}
			return
		}
		conn, err := net.Dial("tcp", addr)
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}

// publishAPIAddress tells RunIsolated's forwarder where the API server is.
func publishAPIAddress(host string) error {
	path := os.Getenv(apiAddrFileEnv)
	if path == "" {
		return nil
	}
	u, err := url.Parse(host)
	if err != nil {
		return fmt.Errorf("parsing the API server's address %q: %w", host, err)
	}
	if err := os.WriteFile(path, []byte(u.Host), 0o600); err != nil {
		return fmt.Errorf("publishing the API server's address: %w", err)
	}
	return nil
}

// setUpNetwork runs once per process: a test binary's TestMain and the demo
// command it calls may both ask for isolation.
func setUpNetwork() error {
	setUpOnce.Do(func() { setUpErr = addLocalRange() })
	return setUpErr
}

var (
	setUpOnce sync.Once
	setUpErr  error
)

func addLocalRange() error {
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"route", "add", "local", localCIDR, "dev", "lo"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %w: %s", args, err, out)
		}
	}
	return nil
}
