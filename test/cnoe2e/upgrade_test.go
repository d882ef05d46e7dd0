//go:build cnoe2e

package cnoe2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// footprint is what CNO shows of itself on the cluster: its related
// objects, the condition types of the operator config and of
// clusteroperator/network, and the namespaces and workloads that exist.
type footprint struct {
	related, operatorConditions, clusterOperatorConditions, namespaces, workloads []string
}

func (e *env) footprint() footprint {
	e.t.Helper()
	var f footprint
	co := &configv1.ClusterOperator{}
	require.NoError(e.t, e.c.Get(e.ctx(), client.ObjectKey{Name: "network"}, co))
	for _, r := range co.Status.RelatedObjects {
		f.related = append(f.related, fmt.Sprintf("%s/%s %s/%s", r.Group, r.Resource, r.Namespace, r.Name))
	}
	for _, c := range co.Status.Conditions {
		f.clusterOperatorConditions = append(f.clusterOperatorConditions, string(c.Type))
	}
	for typ := range e.operatorConditions() {
		f.operatorConditions = append(f.operatorConditions, typ)
	}
	nss := &corev1.NamespaceList{}
	require.NoError(e.t, e.c.List(e.ctx(), nss))
	for _, ns := range nss.Items {
		f.namespaces = append(f.namespaces, ns.Name)
	}
	dss, deps := &appsv1.DaemonSetList{}, &appsv1.DeploymentList{}
	require.NoError(e.t, e.c.List(e.ctx(), dss))
	require.NoError(e.t, e.c.List(e.ctx(), deps))
	for _, ds := range dss.Items {
		f.workloads = append(f.workloads, "DaemonSet "+ds.Namespace+"/"+ds.Name)
	}
	for _, dep := range deps.Items {
		f.workloads = append(f.workloads, "Deployment "+dep.Namespace+"/"+dep.Name)
	}
	for _, s := range [][]string{f.related, f.operatorConditions, f.clusterOperatorConditions, f.namespaces, f.workloads} {
		sort.Strings(s)
	}
	return f
}

// added and removed compare two sorted lists.
func added(before, after []string) []string {
	var out []string
	for _, s := range after {
		if !slices.Contains(before, s) {
			out = append(out, s)
		}
	}
	return out
}

// isNMState says whether a footprint entry is kubernetes-nmstate's: in its
// namespace, named for it, or one of its conditions.
func isNMState(entry string) bool {
	return strings.Contains(entry, nmstate.Namespace) || strings.Contains(entry, " nmstate") ||
		strings.Contains(entry, "/nmstate") || strings.Contains(entry, "/nncp-") || strings.HasPrefix(entry, "KubernetesNMState") || strings.Contains(entry, ".nmstate.io")
}

// waitPristineSettled waits until CNO has written its status: the operator
// config's and clusteroperator/network's conditions and related objects.
func (e *env) waitPristineSettled() footprint {
	e.t.Helper()
	var f footprint
	require.True(e.t, waitFor(3*time.Minute, func() bool {
		f = e.footprint()
		return len(f.related) > 0 && slices.Contains(f.clusterOperatorConditions, "Available") &&
			slices.Contains(f.operatorConditions, "Available")
	}), "CNO never wrote its status: %+v", f)
	// One more status pass, so that what it writes has settled.
	e.reconciled()
	return e.footprint()
}

// TestUpgradeThenDowngrade (scenarios h and i): the pristine 2a6a57fef
// binary runs first; it is then replaced by the patched one (an upgrade):
// only kubernetes-nmstate's namespace, workloads and conditions appear,
// nothing of CNO's goes, and CNO's related objects do not change. Then the
// pristine binary again (a downgrade): it does not know kubernetes-nmstate,
// and its status manager prunes every related object it does not render.
// None of kubernetes-nmstate's objects is related, so it deletes none: the
// handler keeps running on every node, and the users' policies stay. The
// KubernetesNMState* conditions stay as the patched CNO last wrote them
// (docs/cno-integration.md says how an admin removes them, and the rest).
func TestUpgradeThenDowngrade(t *testing.T) {
	bins := cnoBinaries(t)
	e := start(t, options{platform: configv1.BareMetalPlatformType, binary: bins.pristine})
	before := e.waitPristineSettled()
	assert.Empty(t, slices.DeleteFunc(slices.Clone(before.related), func(s string) bool { return !isNMState(s) }),
		"the pristine CNO relates no kubernetes-nmstate object")
	t.Logf("pristine CNO: %d related objects, operator conditions %v", len(before.related), before.operatorConditions)

	began := time.Now()
	require.NoError(t, e.cno.Restart(bins.patched))
	e.waitRolledOut(4 * time.Minute)
	e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	figure(t, "upgrade (patched CNO started) to %s=True: %s", nmstate.ConditionAvailable, time.Since(began).Round(100*time.Millisecond))
	var after footprint
	require.True(t, waitFor(3*time.Minute, func() bool {
		after = e.footprint()
		return slices.Contains(after.clusterOperatorConditions, nmstate.ConditionAvailable)
	}), "the conditions never reached clusteroperator/network: %v", after.clusterOperatorConditions)
	assert.Equal(t, before.related, after.related, "the upgrade changed CNO's related objects")
	for name, lists := range map[string][2][]string{
		"operator config conditions":         {before.operatorConditions, after.operatorConditions},
		"clusteroperator/network conditions": {before.clusterOperatorConditions, after.clusterOperatorConditions},
		"namespaces":                         {before.namespaces, after.namespaces},
		"workloads":                          {before.workloads, after.workloads},
	} {
		assert.Empty(t, added(lists[1], lists[0]), "%s gone with the upgrade", name)
		appeared := added(lists[0], lists[1])
		assert.NotEmpty(t, appeared, "kubernetes-nmstate's %s appear with the upgrade", name)
		for _, a := range appeared {
			assert.True(t, isNMState(a), "%s of CNO's own appeared with the upgrade: %s", name, a)
		}
	}
	policy := e.createPolicy("keep-me")
	deployed := e.nmstateObjects()
	require.NotEmpty(t, deployed)
	handlerPods := e.handlerPods()
	require.NotEmpty(t, handlerPods)

	// The downgrade: two whole reconciles of the pristine CNO, each with its
	// status manager's pruning pass.
	require.NoError(t, e.cno.Restart(bins.pristine))
	e.reconciled()
	e.reconciled()
	down := e.footprint()
	assert.Equal(t, before.related, down.related, "the downgraded CNO's related objects")
	assert.Empty(t, e.missing(deployed), "the downgrade deleted kubernetes-nmstate's objects")
	assert.Equal(t, handlerPods, e.handlerPods(), "the handler pods after the downgrade")
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(policyGVK)
	require.True(t, e.exists(p, "", "keep-me"), "the downgrade lost the user's policy")
	assert.Equal(t, policy, p.GetUID())
	t.Logf("after the downgrade: %d objects of kubernetes-nmstate, handler pods %d, workloads %v", len(deployed), len(handlerPods), added(before.workloads, down.workloads))
	for _, c := range e.operatorConditions() {
		if strings.HasPrefix(c.Type, "KubernetesNMState") {
			t.Logf("left on the operator config by the patched CNO: %s=%s/%s %q", c.Type, c.Status, c.Reason, c.Message)
		}
	}
}

// handlerPods are the running handler pods, by name, with their UIDs.
func (e *env) handlerPods() map[string]string {
	e.t.Helper()
	pods := &corev1.PodList{}
	require.NoError(e.t, e.c.List(e.ctx(), pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"component": "kubernetes-nmstate-handler"}))
	out := map[string]string{}
	for _, pod := range pods.Items {
		if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
			out[pod.Name] = string(pod.UID)
		}
	}
	return out
}

// TestRunBeside (scenario j): `cno-nmstate run`, this project's own host,
// started beside the patched CNO (as an admin might, from the README)
// finds CNO's status manager owning the KubernetesNMState* conditions and
// writes nothing but its leader Lease (and the Event of taking it), while
// CNO goes on: the handler is not touched.
func TestRunBeside(t *testing.T) {
	e, deployed, _ := deployedOnBareMetal(t, options{})
	bin := filepath.Join(t.TempDir(), "cno-nmstate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/cno-nmstate/cno-nmstate/cmd/cno-nmstate").CombinedOutput()
	require.NoError(t, err, "building cno-nmstate: %s", out)
	proxy, err := devcluster.StartFaultProxy(e.cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	kubeconfig := filepath.Join(t.TempDir(), "host.kubeconfig")
	require.NoError(t, proxy.WriteKubeconfig(kubeconfig))
	s := e.sample(deployed, time.Time{})
	cmd := exec.Command(bin, "run", "-kubeconfig", kubeconfig, "-handler-image", "quay.io/openshift/origin-kubernetes-nmstate-handler:beside")
	host, err := podproc.Run("cno-nmstate-run", cmd, filepath.Join(t.TempDir(), "run.log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = host.Stop()
		if t.Failed() {
			t.Logf("--- cno-nmstate run's output:\n%s", tail(host.Log(), 40))
		}
	})
	require.True(t, waitFor(2*time.Minute, func() bool { return strings.Contains(host.Log(), "standing by") }),
		"the host never said it stands by; its output:\n%s", tail(host.Log(), 40))
	// Six whole reconciles of CNO's beside it.
	for range 6 {
		e.reconciled()
	}
	exited, err := host.Exited()
	require.False(t, exited, "cno-nmstate run exited: %v", err)
	samples, problems := s.stop()
	t.Logf("%d samples", samples)
	assert.Empty(t, problems, "with cno-nmstate run beside CNO")
	var writes []string
	reads, lease := 0, 0
	for _, r := range proxy.Requests() {
		switch {
		case r.Method == http.MethodGet:
			reads++
		// Leader election: the Lease, and the Event that records taking it,
		// both in the Lease's namespace.
		case strings.HasPrefix(r.Path, "/apis/coordination.k8s.io/v1/namespaces/"+devcluster.CNONamespace+"/leases"),
			r.Method == http.MethodPost && r.Path == "/api/v1/namespaces/"+devcluster.CNONamespace+"/events":
			lease++
		default:
			writes = append(writes, r.Method+" "+r.Path)
		}
	}
	figure(t, "cno-nmstate run beside CNO through six of its reconciles: %d reads, %d writes for leader election, %d others", reads, lease, len(writes))
	assert.Empty(t, writes, "what cno-nmstate run wrote beside CNO, leader election aside")
	ds := &appsv1.DaemonSet{}
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.NotEqual(t, "quay.io/openshift/origin-kubernetes-nmstate-handler:beside", ds.Spec.Template.Spec.Containers[0].Image,
		"the handler is CNO's, not the host's")
	_ = os.Remove(bin)
}
