package e2e

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// handEdit is what an admin might add to the handler with kubectl: a
// sidecar, an extra env var and a memory limit (fields the plugin does not
// render), and in the same patch a changed image and a changed value of an
// env var the plugin renders.
const handEdit = `{"spec":{"template":{"spec":{"containers":[
  {"name":"nmstate-handler","image":"evil.example.com/handler:1",
   "env":[{"name":"EXTRA_DEBUG","value":"1"},{"name":"NMSTATE_INSTANCE_NODE_LOCK_FILE","value":"/tmp/lock"}],
   "resources":{"limits":{"memory":"512Mi"}}},
  {"name":"debug","image":"registry.example.com/tools:1","command":["sleep","infinity"]}]}}}}`

// TestHandEditsBeyondOwnedFields pins the decision of docs/architecture.md
// ("Hand edits"): what the plugin renders is restored at once, what it does
// not render and someone else added is kept, as CNO does with every operand
// it applies (server-side apply; a field is removed only by its owner). It
// also holds after a further reconcile, and the host does not fight the
// edit: the DaemonSet's generation moves once for the edit and once for the
// restore, then stays.
func TestHandEditsBeyondOwnedFields(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	reconciles := &reconcileCounter{}
	k.startHost(reconciles.option())
	ds := &appsv1.DaemonSet{}
	k.waitExists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet)
	before := ds.Generation

	out, err := k.kubectl("-n", nmstate.Namespace, "patch", "daemonset", nmstate.HandlerDaemonSet, "-p", handEdit)
	require.NoError(t, err, out)
	require.True(t, waitUntil(func() bool {
		require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
		c := ds.Spec.Template.Spec.Containers[0]
		return c.Image == handlerImage && envValue(c, "NMSTATE_INSTANCE_NODE_LOCK_FILE") == "/var/k8s_nmstate/handler_lock"
	}), "the host did not restore the image and the lock file it renders; last seen: %s, lock file %q", ds.Spec.Template.Spec.Containers[0].Image,
		envValue(ds.Spec.Template.Spec.Containers[0], "NMSTATE_INSTANCE_NODE_LOCK_FILE"))
	restored := ds.Generation
	assert.Equal(t, before+2, restored, "one generation for the edit, one for the restore")

	// One more reconcile after the restore: what the plugin does not render
	// is still there, and nothing was written.
	reconciles.after(t, func() { k.patchNetwork(`{"metadata":{"annotations":{"e2e.example.com/poke":"1"}}}`) })
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, restored, ds.Generation, "the host fought the hand edit")
	assert.Equal(t, []string{"nmstate-handler", "debug"}, containerNames(ds), "the sidecar is kept")
	handler := ds.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "1", envValue(handler, "EXTRA_DEBUG"), "the extra env var is kept")
	assert.Equal(t, "512Mi", handler.Resources.Limits.Memory().String(), "the memory limit is kept")
	assert.Equal(t, "100Mi", handler.Resources.Requests.Memory().String(), "the rendered request is untouched")

	// docs/troubleshooting.md's command shows who set what.
	out, err = k.kubectl("-n", nmstate.Namespace, "get", "daemonset", nmstate.HandlerDaemonSet, "--show-managed-fields",
		"-o", `jsonpath={range .metadata.managedFields[*]}{.manager}{"\t"}{.operation}{"\t"}{.time}{"\n"}{end}`)
	require.NoError(t, err, out)
	assert.Contains(t, out, controller.FieldManager+"\tApply\t")
	assert.Contains(t, out, "kubectl-patch\tUpdate\t")

	// The way back that docs/troubleshooting.md gives: remove them by hand.
	out, err = k.kubectl("-n", nmstate.Namespace, "set", "env", "daemonset/"+nmstate.HandlerDaemonSet, "-c", "nmstate-handler", "EXTRA_DEBUG-")
	require.NoError(t, err, out)
	out, err = k.kubectl("-n", nmstate.Namespace, "patch", "daemonset", nmstate.HandlerDaemonSet, "--type", "json", "-p",
		`[{"op":"remove","path":"/spec/template/spec/containers/1"},{"op":"remove","path":"/spec/template/spec/containers/0/resources/limits"}]`)
	require.NoError(t, err, out)
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, []string{"nmstate-handler"}, containerNames(ds), "the sidecar is gone")
	assert.Empty(t, envValue(ds.Spec.Template.Spec.Containers[0], "EXTRA_DEBUG"), "the extra env var is gone")
	assert.Empty(t, ds.Spec.Template.Spec.Containers[0].Resources.Limits, "the limit is gone")
}

func containerNames(ds *appsv1.DaemonSet) []string {
	var names []string
	for _, c := range ds.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	return names
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
