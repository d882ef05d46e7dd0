// Command nodestub stands in for the parts of a real node that upstream
// kubernetes-nmstate's handler needs and a test machine lacks: `nmstatectl`
// (NetworkManager, D-Bus) and `ping`. It does nothing else. It is one
// multi-call binary; the name it is invoked by chooses the behaviour, so the
// end-to-end tests put it on PATH as `nmstatectl` with a symlink `ping`.
//
// The node's state is read from state.json next to the executable (a
// loopback-only state when absent), and every apply, commit and rollback is
// appended to applied.log in the same directory so tests can see what the
// handler did; every nmstatectl command line goes to calls.log, so they can
// see how it was asked (e.g. -vv when the handler logs at debug level). Of
// nmstate's own checks it makes one, so that a test can make a policy fail:
// an IPv4 prefix length over 32 is refused, as nmstate refuses it. Of
// nmstate's feature statistics it reports one, the one whose name upstream's
// own end-to-end test shows: dhcpv4-custom-hostname.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	stateFile   = "state.json"
	appliedFile = "applied.log"
	callsFile   = "calls.log"
)

// defaultState is a node with only a loopback interface, so the handler's
// probes (default route next hop, DNS server) resolve to loopback targets.
const defaultState = `{
  "interfaces": [
    {"name": "lo", "type": "loopback", "state": "up",
     "ipv4": {"enabled": true, "address": [{"ip": "127.0.0.1", "prefix-length": 8}]}}
  ],
  "routes": {
    "config": [],
    "running": [
      {"destination": "0.0.0.0/0", "next-hop-address": "127.0.0.1",
       "next-hop-interface": "lo", "table-id": 254}
    ]
  },
  "dns-resolver": {"config": {}, "running": {"server": ["127.0.0.1"]}}
}`

var subcommands = []string{"show", "apply", "set", "commit", "rollback", "st", "policy"}

func main() {
	name := filepath.Base(os.Args[0])
	var err error
	switch name {
	case "nmstatectl":
		err = nmstatectl(os.Args[1:], os.Stdin, os.Stdout)
	case "ping":
		err = ping(os.Args[1:], os.Stdout)
	default:
		err = usageError{fmt.Errorf("invoked as %q: want nmstatectl or ping", name)}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s (nodestub): %v\n", name, err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError marks a call the stub does not understand (exit 2), as opposed
// to one that fails (exit 1).
type usageError struct{ error }

// dir is the directory of the executable as invoked. os.Args[0] is looked up
// on PATH rather than using os.Executable, which would resolve the ping
// symlink; both live in the same directory anyway.
func dir() (string, error) {
	p, err := exec.LookPath(os.Args[0])
	if err != nil {
		return "", fmt.Errorf("locate own executable: %w", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("locate own executable: %w", err)
	}
	return filepath.Dir(abs), nil
}

func nmstatectl(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("no subcommand; supported: %s", strings.Join(subcommands, ", "))}
	}
	d, err := dir()
	if err != nil {
		return err
	}
	if err := appendLine(filepath.Join(d, callsFile), []byte(strings.Join(args, " "))); err != nil {
		return err
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "show":
		return show(d, rest, stdout)
	case "apply", "set": // older handlers call it set
		return apply(d, stdin)
	case "commit", "rollback":
		return appendLog(d, []byte(sub))
	case "st":
		return statistic(stdin, stdout)
	case "policy":
		return policy(rest, stdout)
	default:
		return usageError{fmt.Errorf("unknown subcommand %q; supported: %s", sub, strings.Join(subcommands, ", "))}
	}
}

func loadState(d string) (map[string]any, error) {
	raw, err := os.ReadFile(filepath.Join(d, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		raw = []byte(defaultState)
	} else if err != nil {
		return nil, fmt.Errorf("read node state: %w", err)
	}
	var state map[string]any
	if err := yaml.Unmarshal(raw, &state); err != nil {
		return nil, fmt.Errorf("parse node state %s: %w", filepath.Join(d, stateFile), err)
	}
	return state, nil
}

// show prints the state as JSON (upstream parses it as YAML, a superset).
// Non-flag arguments name interfaces, as in `nmstatectl show lo`; the other
// sections are kept so the output stays a whole state.
func show(d string, args []string, stdout io.Writer) error {
	state, err := loadState(d)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			names[a] = true
		}
	}
	if len(names) > 0 {
		ifaces, _ := state["interfaces"].([]any)
		kept := []any{}
		for _, i := range ifaces {
			if m, ok := i.(map[string]any); ok && names[fmt.Sprint(m["name"])] {
				kept = append(kept, i)
			}
		}
		state["interfaces"] = kept
	}
	out, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		return fmt.Errorf("encode node state: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// readDesired reads the desired state nmstatectl is handed on stdin.
func readDesired(stdin io.Reader) (map[string]any, error) {
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("read desired state: %w", err)
	}
	var desired map[string]any
	if err := yaml.Unmarshal(raw, &desired); err != nil {
		return nil, fmt.Errorf("desired state is not a YAML/JSON object: %w", err)
	}
	return desired, nil
}

// apply only checks the desired state is an object and records it; the
// node's state does not change, so the handler's probes keep passing.
func apply(d string, stdin io.Reader) error {
	desired, err := readDesired(stdin)
	if err != nil {
		return err
	}
	if desired == nil {
		return errors.New("desired state is empty")
	}
	for _, iface := range interfaces(desired) {
		ipv4, _ := iface["ipv4"].(map[string]any)
		addrs, _ := ipv4["address"].([]any)
		for _, a := range addrs {
			addr, _ := a.(map[string]any)
			if prefix, ok := addr["prefix-length"].(float64); ok && prefix > 32 {
				return fmt.Errorf("InvalidArgument: Invalid IPv4 network prefix length %v of interface %v", prefix, iface["name"])
			}
		}
	}
	line, err := json.Marshal(desired)
	if err != nil {
		return fmt.Errorf("encode desired state: %w", err)
	}
	return appendLog(d, line)
}

// statistic prints the features the desired state uses, as `nmstatectl st`
// does: dhcpv4-custom-hostname when an interface sets an IPv4 DHCP host name.
func statistic(stdin io.Reader, stdout io.Writer) error {
	desired, err := readDesired(stdin)
	if err != nil {
		return err
	}
	features := []string{}
	for _, iface := range interfaces(desired) {
		ipv4, _ := iface["ipv4"].(map[string]any)
		if _, ok := ipv4["dhcp-custom-hostname"]; ok {
			features = append(features, "dhcpv4-custom-hostname")
			break
		}
	}
	out, err := json.Marshal(map[string]any{"features": features})
	if err != nil {
		return fmt.Errorf("encode statistics: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// interfaces are the state's interface objects.
func interfaces(state map[string]any) []map[string]any {
	list, _ := state["interfaces"].([]any)
	var out []map[string]any
	for _, i := range list {
		if m, ok := i.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func appendLog(d string, line []byte) error {
	return appendLine(filepath.Join(d, appliedFile), line)
}

func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	// One write per line so concurrent handlers' lines do not interleave.
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// policy handles `policy [--current F] [--json] --output-captured F
// [--captured F] POLICYFILE`. Captures are not evaluated: the desired state
// is printed as given and the captured state passed in (or {}) is written
// back out.
func policy(args []string, stdout io.Writer) error {
	var outputCaptured, captured, policyFile string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--json":
		case "--current", "--captured", "--output-captured":
			if i+1 >= len(args) {
				return usageError{fmt.Errorf("policy: %s needs a file", a)}
			}
			i++
			if a == "--captured" {
				captured = args[i]
			} else if a == "--output-captured" {
				outputCaptured = args[i]
			}
		default:
			if strings.HasPrefix(a, "-") || policyFile != "" {
				return usageError{fmt.Errorf("policy: unexpected argument %q", a)}
			}
			policyFile = a
		}
	}
	if policyFile == "" {
		return usageError{errors.New("policy: no policy file")}
	}
	raw, err := os.ReadFile(policyFile)
	if err != nil {
		return fmt.Errorf("read policy: %w", err)
	}
	var p struct {
		DesiredState json.RawMessage `json:"desiredState"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("parse policy %s: %w", policyFile, err)
	}
	desired := []byte("{}")
	if len(p.DesiredState) > 0 && string(p.DesiredState) != "null" {
		desired = p.DesiredState
	}
	capturedState := []byte("{}")
	if captured != "" {
		c, err := os.ReadFile(captured)
		if err != nil {
			return fmt.Errorf("read captured state: %w", err)
		}
		if len(strings.TrimSpace(string(c))) > 0 {
			capturedState = c
		}
	}
	if outputCaptured != "" {
		if err := os.WriteFile(outputCaptured, capturedState, 0o644); err != nil {
			return fmt.Errorf("write captured state: %w", err)
		}
	}
	_, err = fmt.Fprintf(stdout, "%s\n", desired)
	return err
}

// ping answers loopback targets only, so test traffic never leaves the
// machine. It accepts `-I iface -c N target` like the handler's probe.
func ping(args []string, stdout io.Writer) error {
	var target string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-I" || a == "-c" || a == "-W" || a == "-w":
			i++ // skip the flag's value
		case strings.HasPrefix(a, "-"):
		default:
			target = a
		}
	}
	if target == "" {
		return usageError{errors.New("no target")}
	}
	ip, err := netip.ParseAddr(target)
	if err != nil || !ip.Unmap().IsLoopback() {
		return fmt.Errorf("target %q: stub ping answers loopback targets only", target)
	}
	_, err = fmt.Fprintf(stdout, "64 bytes from %s: icmp_seq=1 ttl=64 time=0.010 ms\n", ip)
	return err
}
