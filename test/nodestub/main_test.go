package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build compiles the stub into a fresh directory as nmstatectl with a ping
// symlink, the way the end-to-end tests install it.
func build(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(d, "nmstatectl"), ".").CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.Symlink("nmstatectl", filepath.Join(d, "ping")))
	return d
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, d, name, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(d, name), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, stdout.String(), stderr.String()}
}

const ethState = `{"interfaces":[{"name":"eth0","type":"ethernet","state":"up"},{"name":"lo","type":"loopback","state":"up"}],
"routes":{"running":[{"destination":"0.0.0.0/0","next-hop-address":"127.0.0.1","next-hop-interface":"eth0"}],"config":[]},
"dns-resolver":{"running":{"server":["127.0.0.153"]},"config":{}}}`

func TestNmstatectl(t *testing.T) {
	d := build(t)
	require.NoError(t, os.WriteFile(filepath.Join(d, "state.json"), []byte(ethState), 0o644))

	tests := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		contains []string // in stdout, or stderr when code != 0
		excludes []string
	}{
		{name: "show", args: []string{"show"}, contains: []string{`"eth0"`, `"lo"`, `"127.0.0.153"`}},
		{name: "show verbose", args: []string{"show", "-vvv"}, contains: []string{`"eth0"`}},
		{name: "show one interface", args: []string{"show", "lo"}, contains: []string{`"lo"`, `"routes"`}, excludes: []string{`"ethernet"`}},
		{name: "apply yaml", stdin: "interfaces:\n- name: eth1\n  state: up\n", args: []string{"apply", "-vv", "--no-commit", "--timeout", "480"}},
		{name: "apply json", stdin: `{"interfaces":[{"name":"eth2"}]}`, args: []string{"apply", "-v", "--no-commit", "--timeout", "10"}},
		{name: "apply garbage", stdin: "- not\n- an object\n", args: []string{"apply"}, code: 1, contains: []string{"not a YAML/JSON object"}},
		{name: "apply empty", args: []string{"apply"}, code: 1, contains: []string{"empty"}},
		{name: "commit", args: []string{"commit"}},
		{name: "rollback", args: []string{"rollback"}},
		{name: "statistic", stdin: `{"interfaces":[]}`, args: []string{"st", "-"}, contains: []string{`{"features":[]}`}},
		{name: "statistic of a DHCP host name", stdin: "interfaces:\n- name: eth1\n  ipv4: {enabled: true, dhcp: true, dhcp-custom-hostname: foo}\n",
			args: []string{"st", "-"}, contains: []string{`{"features":["dhcpv4-custom-hostname"]}`}},
		{name: "apply an IPv4 prefix over 32", stdin: `{"interfaces":[{"name":"eth3","ipv4":{"enabled":true,"address":[{"ip":"10.0.0.1","prefix-length":33}]}}]}`,
			args: []string{"apply"}, code: 1, contains: []string{"Invalid IPv4 network prefix length 33 of interface eth3"}},
		{name: "unknown", args: []string{"gen-conf"}, code: 2, contains: []string{`"gen-conf"`, "show, apply"}},
		{name: "none", code: 2, contains: []string{"no subcommand"}},
		{name: "policy without file", args: []string{"policy", "--json"}, code: 2, contains: []string{"no policy file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, d, "nmstatectl", tc.stdin, tc.args...)
			require.Equal(t, tc.code, r.code, "stderr: %s", r.stderr)
			out := r.stdout
			if tc.code != 0 {
				out = r.stderr
			}
			for _, s := range tc.contains {
				assert.Contains(t, out, s)
			}
			for _, s := range tc.excludes {
				assert.NotContains(t, out, s)
			}
		})
	}

	log, err := os.ReadFile(filepath.Join(d, "applied.log"))
	require.NoError(t, err)
	assert.Equal(t, `{"interfaces":[{"name":"eth1","state":"up"}]}`+"\n"+
		`{"interfaces":[{"name":"eth2"}]}`+"\n"+"commit\nrollback\n", string(log))
	calls, err := os.ReadFile(filepath.Join(d, "calls.log"))
	require.NoError(t, err)
	assert.Contains(t, string(calls), "\nshow lo\n", "every command line is recorded")
}

func TestShowDefaultState(t *testing.T) {
	d := build(t) // no state.json
	r := run(t, d, "nmstatectl", "", "show")
	require.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, defaultState, r.stdout)
}

func TestShowFoundOnPath(t *testing.T) {
	d := build(t)
	require.NoError(t, os.WriteFile(filepath.Join(d, "state.json"), []byte(ethState), 0o644))
	// Invoked by bare name, as the handler does: the stub must find state.json
	// through PATH.
	t.Setenv("PATH", d+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := exec.Command("nmstatectl", "show").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"eth0"`)
}

func TestPolicy(t *testing.T) {
	d := build(t)
	work := t.TempDir()
	policyFile := filepath.Join(work, "policy")
	current := filepath.Join(work, "current")
	captured := filepath.Join(work, "captured")
	require.NoError(t, os.WriteFile(policyFile, []byte(
		`{"capture":{"gw":"routes.running.destination==\"0.0.0.0/0\""},"desiredState":{"interfaces":[{"name":"br1","type":"linux-bridge"}]}}`), 0o644))
	require.NoError(t, os.WriteFile(current, []byte(ethState), 0o644))
	require.NoError(t, os.WriteFile(captured, nil, 0o644))

	tests := []struct {
		name         string
		policy       string
		captured     string // content of the --captured file; "" means flag absent
		wantStdout   string
		wantCaptured string
	}{
		{name: "desired state", wantStdout: `{"interfaces":[{"name":"br1","type":"linux-bridge"}]}`, wantCaptured: `{}`},
		{name: "no desired state", policy: `{"capture":{}}`, wantStdout: `{}`, wantCaptured: `{}`},
		{name: "captured kept", captured: `{"gw":{"state":{}}}`, wantStdout: `{"interfaces":[{"name":"br1","type":"linux-bridge"}]}`, wantCaptured: `{"gw":{"state":{}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pf := policyFile
			if tc.policy != "" {
				pf = filepath.Join(t.TempDir(), "policy")
				require.NoError(t, os.WriteFile(pf, []byte(tc.policy), 0o644))
			}
			args := []string{"policy", "--current", current, "--json", "--output-captured", captured}
			require.NoError(t, os.WriteFile(captured, []byte(tc.captured), 0o644))
			if tc.captured != "" {
				args = append(args, "--captured", captured) // upstream passes the same file
			}
			r := run(t, d, "nmstatectl", "", append(args, pf)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.JSONEq(t, tc.wantStdout, r.stdout)
			got, err := os.ReadFile(captured)
			require.NoError(t, err)
			assert.JSONEq(t, tc.wantCaptured, string(got))
		})
	}

	r := run(t, d, "nmstatectl", "", "policy", "--json", "--output-captured", captured, filepath.Join(work, "missing"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "read policy")
}

func TestPing(t *testing.T) {
	d := build(t)
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-I", "lo", "-c", "1", "127.0.0.1"}, 0, "64 bytes from 127.0.0.1"},
		{[]string{"-I", "eth0", "-c", "1", "127.1.2.3"}, 0, "64 bytes from 127.1.2.3"},
		{[]string{"-c", "1", "::1"}, 0, "64 bytes from ::1"},
		{[]string{"-I", "eth0", "-c", "1", "192.168.1.1"}, 1, "loopback targets only"},
		{[]string{"-I", "eth0", "-c", "1", "8.8.8.8"}, 1, "loopback targets only"},
		{[]string{"-c", "1", "localhost"}, 1, "loopback targets only"},
		{[]string{"-I", "lo"}, 2, "no target"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, d, "ping", "", tc.args...)
			require.Equal(t, tc.code, r.code, r.stderr)
			if tc.code == 0 {
				assert.Contains(t, r.stdout, tc.out)
			} else {
				assert.Contains(t, r.stderr, tc.out)
			}
		})
	}
}

func TestUnknownName(t *testing.T) {
	d := build(t)
	require.NoError(t, os.Symlink("nmstatectl", filepath.Join(d, "ip")))
	r := run(t, d, "ip", "", "link")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "want nmstatectl or ping")
}
