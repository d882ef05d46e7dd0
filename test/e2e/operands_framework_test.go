package e2e

// The operands as they run: upstream kubernetes-nmstate's own binary
// (bin/kubernetes-nmstate-handler, built by `make tools` from its Go module),
// launched from the pods the workload controllers created for the rendered
// DaemonSet and Deployment (internal/podproc). devcluster.StartOperands is
// the one place that stands in for what needs a real node (nmstatectl, ping,
// the node's DNS server; D-Bus stays absent and the handler logs it and goes
// on) or another operator (OpenShift's service CA).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

type operands struct {
	k *cluster
	*devcluster.Operands
}

// startOperands prepares the node stand-ins and the service CA; run starts
// the processes.
func (k *cluster) startOperands() *operands {
	k.t.Helper()
	o, err := devcluster.StartOperands(k.cfg, k.c, assetsDir(k.t), k.t.TempDir())
	require.NoError(k.t, err)
	k.t.Cleanup(func() { assert.NoError(k.t, o.Close()) })
	return &operands{k: k, Operands: o}
}

// pod waits for a pod of the rendered workload (its "name" label) bound to
// node ("" for any) and returns it.
func (o *operands) pod(workload, node string) *corev1.Pod {
	o.k.t.Helper()
	var found *corev1.Pod
	var err error
	ok := waitUntil(func() bool {
		found, err = devcluster.BoundPod(o.k.ctx(), o.k.c, workload, node)
		return found != nil
	})
	require.NoError(o.k.t, err)
	require.True(o.k.t, ok, "no %s pod was bound to node %q", workload, node)
	return found
}

// run starts the container of the workload's pod on node as a process, and
// stops it when the test ends; on failure its output is logged.
func (o *operands) run(workload, node string) *podproc.Process {
	o.k.t.Helper()
	pod := o.pod(workload, node)
	var p *podproc.Process
	var err error
	// A secret volume may not be signed yet, as a kubelet waits for it.
	require.True(o.k.t, waitUntil(func() bool { p, err = o.Runner.Start(o.k.ctx(), pod, workload); return err == nil }),
		"starting %s on %s: %v", workload, pod.Spec.NodeName, err)
	o.k.t.Cleanup(func() {
		assert.NoError(o.k.t, p.Stop())
		if o.k.t.Failed() {
			o.k.t.Logf("--- output of %s (%s):\n%s", workload, p.Name, p.Log())
		}
	})
	return p
}

// requireRunning fails the test if the process has exited.
func requireRunning(t *testing.T, p *podproc.Process) {
	t.Helper()
	exited, err := p.Exited()
	require.False(t, exited, "%s exited (%v); output:\n%s", p.Name, err, p.Log())
}

// applied says whether the nmstatectl stand-in was handed a state containing
// text.
func (o *operands) applied(text string) bool {
	return strings.Contains(o.appliedLog(), text)
}

// appliedLog is what the stand-in nmstatectl was asked to apply so far.
func (o *operands) appliedLog() string {
	b, err := os.ReadFile(filepath.Join(o.NodeDir, "applied.log"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// kubectlApply applies manifest with the real kubectl, as a user would.
func (k *cluster) kubectlApply(manifest string) (string, error) {
	return k.kubectl("apply", "-f", writeTemp(k.t, manifest))
}

// writeTemp writes content to a file of the test's own and returns its path.
func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}
