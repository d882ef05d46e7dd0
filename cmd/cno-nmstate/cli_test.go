package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cno-nmstate/cno-nmstate/bindata"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Exit codes as Go's flag package and kubectl users expect: 0 for help, 2
// for a mistake on the command line, 1 for a failure while running; help on
// stdout, errors on stderr.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string
		stderrHas []string
	}{
		{name: "top-level -h", args: []string{"-h"}, stdoutHas: []string{"usage: cno-nmstate <command>", "render", "run", "demo", "migrate", "version"}},
		{name: "top-level --help", args: []string{"--help"}, stdoutHas: []string{"usage: cno-nmstate <command>"}},
		{name: "help", args: []string{"help"}, stdoutHas: []string{"usage: cno-nmstate <command>"}},
		{name: "no command", args: nil, code: 2, stderrHas: []string{"usage: cno-nmstate <command>"}},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderrHas: []string{`unknown command "frobnicate"`, "usage:"}},

		{name: "render -h", args: []string{"render", "-h"}, stdoutHas: []string{"usage: cno-nmstate render [flags]", "-platform", "-topology", "-control-plane-topology", "-mode", "-handler-image"}},
		{name: "render --help", args: []string{"render", "--help"}, stdoutHas: []string{"usage: cno-nmstate render [flags]", "-platform"}},
		{name: "run -h", args: []string{"run", "-h"}, stdoutHas: []string{"usage: cno-nmstate run [flags]", "-kubeconfig", "-handler-image",
			"-leader-elect\n", "-leader-elect-resource-namespace", `(default "openshift-network-operator")`, "-leader-elect-resource-name", `(default "cno-nmstate-lock")`}},
		{name: "run --help", args: []string{"run", "--help"}, stdoutHas: []string{"usage: cno-nmstate run [flags]"}},
		{name: "demo -h", args: []string{"demo", "-h"}, stdoutHas: []string{"usage: cno-nmstate demo [flags]", "-keep", "-assets directory"}},
		{name: "version -h", args: []string{"version", "-h"}, stdoutHas: []string{"usage: cno-nmstate version [flags]"}},
		{name: "migrate -h", args: []string{"migrate", "-h"}, stdoutHas: []string{"usage: cno-nmstate migrate [flags]", "NMState CR", "-kubeconfig"}},
		{name: "migrate --help", args: []string{"migrate", "--help"}, stdoutHas: []string{"usage: cno-nmstate migrate [flags]"}},

		{name: "unknown flag", args: []string{"render", "--bogus"}, code: 2, stderrHas: []string{"cno-nmstate render: flag provided but not defined: -bogus", "run 'cno-nmstate render -h'"}},
		{name: "flag without its value", args: []string{"run", "--kubeconfig"}, code: 2, stderrHas: []string{"flag needs an argument: -kubeconfig"}},
		{name: "bad boolean", args: []string{"render", "--default-on-gate=maybe"}, code: 2, stderrHas: []string{`invalid boolean value "maybe" for -default-on-gate`}},
		{name: "unexpected arguments", args: []string{"render", "extra"}, code: 2, stderrHas: []string{`unexpected arguments ["extra"]`}},
		{name: "version takes no arguments", args: []string{"version", "now"}, code: 2, stderrHas: []string{`unexpected arguments ["now"]`}},
		{name: "run without an image refuses to start", args: []string{"run", "--kubeconfig", "/nonexistent"}, code: 2,
			stderrHas: []string{"no handler image: pass -handler-image or set $KUBERNETES_NMSTATE_HANDLER_IMAGE"}},
		{name: "run with an empty Lease namespace", args: []string{"run", "--handler-image", "img:1", "--leader-elect-resource-namespace", ""}, code: 2,
			stderrHas: []string{`-leader-elect-resource-namespace "" is not a namespace name`, `the default is "openshift-network-operator"`, "run 'cno-nmstate run -h'"}},
		{name: "run with a bad Lease name", args: []string{"run", "--handler-image", "img:1", "--leader-elect-resource-name", "Lock!"}, code: 2,
			stderrHas: []string{`-leader-elect-resource-name "Lock!" is not a Lease name`, `the default is "cno-nmstate-lock"`}},
		{name: "migrate takes no arguments", args: []string{"migrate", "nmstate"}, code: 2, stderrHas: []string{`unexpected arguments ["nmstate"]`, "run 'cno-nmstate migrate -h'"}},
		{name: "migrate with an unknown flag", args: []string{"migrate", "--namespace", "x"}, code: 2, stderrHas: []string{"flag provided but not defined: -namespace"}},
		{name: "migrate with an unreadable kubeconfig", args: []string{"migrate", "--kubeconfig", "/nonexistent"}, code: 1,
			stderrHas: []string{"cno-nmstate migrate: loading the kubeconfig:", "/nonexistent"}},
		{name: "run with an unreadable kubeconfig", args: []string{"run", "--kubeconfig", "/nonexistent", "--handler-image", "img:1"}, code: 1,
			stderrHas: []string{"cno-nmstate run: loading the kubeconfig:", "/nonexistent"}},
		{name: "render with unreadable manifests", args: []string{"render", "--handler-image", "img:1", "--manifests", "/nonexistent"}, code: 1,
			stderrHas: []string{"cno-nmstate render: rendering /nonexistent/network/kubernetes-nmstate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(nmstate.EnvHandlerImage, "")
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			assert.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			for _, s := range tt.stdoutHas {
				assert.Contains(t, stdout.String(), s)
			}
			for _, s := range tt.stderrHas {
				assert.Contains(t, stderr.String(), s)
			}
			if tt.code == 0 {
				assert.Empty(t, stderr.String(), "help is not an error")
			} else {
				assert.Empty(t, stdout.String(), "errors go to stderr only")
			}
		})
	}
}

// With no kubeconfig anywhere, migrate and run say which flag or variable
// to set, not client-go's KUBERNETES_MASTER.
func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, args := range [][]string{{"migrate"}, {"run", "--handler-image", "img:1"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 1, run(args, &stdout, &stderr), stderr.String())
		assert.Contains(t, stderr.String(), "no kubeconfig found: pass -kubeconfig FILE or set $KUBECONFIG", args)
		assert.NotContains(t, stderr.String(), "KUBERNETES_MASTER", args)
	}
}

// Flag values get the API's did-you-mean and speak of the flag, not of the
// field or object the value stands in for.
func TestFlagValues(t *testing.T) {
	tests := []struct {
		args      []string
		stderrHas []string
	}{
		{[]string{"--platform", "baremetal"}, []string{`-platform "baremetal" is not valid (values are case-sensitive: did you mean "BareMetal"?)`, "valid values are AWS, Azure, BareMetal"}},
		{[]string{"--platform", "Mainframe"}, []string{`-platform "Mainframe" is not valid; valid values are AWS`}},
		{[]string{"--platform", ""}, []string{`-platform "" is not valid`}},
		{[]string{"--topology", "singlereplica"}, []string{`-topology "singlereplica" is not valid (values are case-sensitive: did you mean "SingleReplica"?); valid values are HighlyAvailable, SingleReplica`}},
		{[]string{"--topology", "External"}, []string{`-topology "External" is not valid; valid values are HighlyAvailable, SingleReplica`}},
		{[]string{"--control-plane-topology", "external"}, []string{`-control-plane-topology "external" is not valid (values are case-sensitive: did you mean "External"?)`}},
		{[]string{"--mode", "enabled"}, []string{`-mode "enabled" is not valid (values are case-sensitive: did you mean "Enabled"?); valid values are Enabled, Disabled`}},
		{[]string{"--mode", "On"}, []string{`-mode "On" is not valid; valid values are Enabled, Disabled`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"render", "--handler-image", "img:1"}, tt.args...), &stdout, &stderr)
			assert.Equal(t, 2, code, stderr.String())
			for _, s := range tt.stderrHas {
				assert.Contains(t, stderr.String(), s)
			}
			for _, field := range []string{"infrastructures.config.openshift.io", "spec.kubernetesNMState"} {
				assert.NotContains(t, stderr.String(), field)
			}
			assert.NotContains(t, stderr.String(), "decision:", "refused before deciding anything")
		})
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"version"}, &stdout, &stderr), stderr.String())
	assert.Equal(t, "cno-nmstate: (devel)\n"+
		"plugin: "+nmstate.PluginVersion+" (the "+nmstate.OwnerLabel+" label on what it renders)\n"+
		"kubernetes-nmstate: "+bindata.KubernetesNMStateVersion+"\n"+
		"go: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n", stdout.String())
	assert.Empty(t, stderr.String())
}
