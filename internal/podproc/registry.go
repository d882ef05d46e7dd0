package podproc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// started records every process Run starts and every one Track is told of,
// so that a test binary can tell, from its own records, whether one outlived
// the tests (Leftovers) however it was started or restarted.
var started struct {
	mu    sync.Mutex
	procs []Tracked
}

// Tracked is a started process: its pid, which is also its process group's
// id (each runs in a group of its own), and the time it started, which
// tells it from a later process that was given the same pid.
type Tracked struct {
	Name  string
	Pid   int
	start string
}

// RecordsEnv names a file to which Track also appends each record, a line
// each, so that the process that started this one finds what it left if it
// dies without stopping it: a test binary's timeout panic, a SIGKILL
// (devcluster.RunIsolated reads it).
const RecordsEnv = "CNO_NMSTATE_PROCESS_RECORDS"

// Track records a process this program started by other means (envtest's
// etcd and kube-apiserver), the leader of a process group of its own. It
// returns false if the process is gone already.
func Track(name string, pid int) (Tracked, bool) {
	st, ok := readStat(pid)
	if !ok {
		return Tracked{}, false
	}
	t := Tracked{Name: name, Pid: pid, start: st.start}
	started.mu.Lock()
	defer started.mu.Unlock()
	started.procs = append(started.procs, t)
	if path := os.Getenv(RecordsEnv); path != "" {
		if err := appendRecord(path, t); err != nil {
			fmt.Fprintf(os.Stderr, "recording %s in %s: %v\n", name, path, err)
		}
	}
	return t, true
}

func appendRecord(path string, t Tracked) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d %s %s\n", t.Pid, t.start, t.Name)
	return errors.Join(err, f.Close())
}

// KillRecorded kills what still runs of the process groups recorded in path
// (RecordsEnv) and says which those were; a missing file records nothing.
func KillRecorded(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the process records: %w", err)
	}
	var errs []error
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			continue // an empty file, or a line cut short by a crash
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil {
			return fmt.Errorf("process record %q: %w", line, err)
		}
		errs = append(errs, Tracked{Name: f[2], Pid: pid, start: f[1]}.Kill())
	}
	return errors.Join(errs...)
}

// Children are the pids of this process's children that run path: how a
// caller finds what a library started for it without telling it the pid.
func Children(path string) []int {
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for pid, st := range processes() {
		if st.ppid != self || st.state == 'Z' {
			continue
		}
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && exe == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// running lists the live members of t's process group, none if its pid has
// since been given to another process.
func (t Tracked) running(procs map[int]stat) []int {
	if st, ok := procs[t.Pid]; ok && st.start != t.start {
		return nil
	}
	var members []int
	for pid, st := range procs {
		if st.pgrp == t.Pid && st.state != 'Z' {
			members = append(members, pid)
		}
	}
	slices.Sort(members)
	return members
}

// Kill ends what still runs of t's process group and reports it, if any.
func (t Tracked) Kill() error {
	members := t.running(processes())
	if len(members) == 0 {
		return nil
	}
	_ = syscall.Kill(-t.Pid, syscall.SIGKILL)
	return fmt.Errorf("%s (process group %d: pids %v) was still running; killed", t.Name, t.Pid, members)
}

// Leftovers are the recorded processes whose process groups still run;
// Kill ends each and names what ran.
func Leftovers() []Tracked {
	procs := processes()
	started.mu.Lock()
	defer started.mu.Unlock()
	var left []Tracked
	for _, t := range started.procs {
		if len(t.running(procs)) > 0 {
			left = append(left, t)
		}
	}
	return left
}

type stat struct {
	state      byte
	ppid, pgrp int
	start      string
}

// processes reads /proc/*/stat.
func processes() map[int]stat {
	entries, _ := os.ReadDir("/proc")
	out := map[int]stat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out[pid] = st
		}
	}
	return out
}

// readStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp ... starttime"
// (starttime is the 22nd field), where comm may hold spaces and parentheses.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	return stat{state: f[0][0], ppid: ppid, pgrp: pgrp, start: string(f[19])}, true
}
