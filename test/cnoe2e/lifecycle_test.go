//go:build cnoe2e

package cnoe2e

import (
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

var policyGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NodeNetworkConfigurationPolicy"}

// createPolicy creates a user's NodeNetworkConfigurationPolicy.
func (e *env) createPolicy(name string) types.UID {
	e.t.Helper()
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"nodeSelector": map[string]any{"kubernetes.io/hostname": "worker-0"},
			"desiredState": map[string]any{"interfaces": []any{map[string]any{"name": "dummy1", "type": "dummy", "state": "up"}}},
		},
	}}
	require.NoError(e.t, e.c.Create(e.ctx(), p), "creating policy %s", name)
	return p.GetUID()
}

// keptObjects are the objects disabling must keep, among what CNO
// deployed: what nmstate.KeptOnDisable names and the Namespace.
func keptObjects(deployed map[object]types.UID) map[object]types.UID {
	out := map[object]types.UID{}
	for o, uid := range deployed {
		if nmstate.KeptOnDisable(o.gvk.Group, o.gvk.Kind, o.name) || (o.gvk.Kind == "Namespace" && o.name == nmstate.Namespace) {
			out[o] = uid
		}
	}
	return out
}

// accessObjects are the ServiceAccounts and RBAC of deployed: what the
// workloads' pods run under, kept until those pods are gone.
func accessObjects(deployed map[object]types.UID) map[object]types.UID {
	out := map[object]types.UID{}
	for o, uid := range deployed {
		switch o.gvk.Kind {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			out[o] = uid
		}
	}
	return out
}

func names(objs map[object]types.UID) []string {
	var out []string
	for o := range objs {
		out = append(out, o.String())
	}
	sort.Strings(out)
	return out
}

// requireKept requires the CRDs, the Namespace, the admission policy, the
// reader role and the policy to be among kept and untouched.
func (e *env) requireKept(kept map[object]types.UID, policy types.UID) {
	e.t.Helper()
	var kinds []string
	for o := range kept {
		kinds = append(kinds, o.gvk.Kind+" "+o.name)
	}
	for _, want := range append([]string{"Namespace " + nmstate.Namespace, "ValidatingAdmissionPolicy " + nmstate.ValidationPolicy,
		"ClusterRole " + nmstate.ClusterReaderRole}, crdKinds()...) {
		assert.Contains(e.t, kinds, want, "among what CNO deployed and must keep")
	}
	assert.Empty(e.t, e.missing(kept), "kept objects")
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(policyGVK)
	require.True(e.t, e.exists(p, "", "keep-me"), "the user's policy is kept")
	assert.Equal(e.t, policy, p.GetUID(), "the policy is the user's, not a new one")
}

func crdKinds() []string {
	var out []string
	for _, n := range nmstate.CRDNames() {
		out = append(out, "CustomResourceDefinition "+n)
	}
	return out
}

// deployedOnBareMetal starts CNO on BareMetal with the default, waits for
// the rollout and Available, and creates a policy.
func deployedOnBareMetal(t *testing.T, o options) (*env, map[object]types.UID, types.UID) {
	t.Helper()
	o.platform = configv1.BareMetalPlatformType
	e := start(t, o)
	e.waitRolledOut(3 * time.Minute)
	e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, "")
	policy := e.createPolicy("keep-me")
	deployed := e.nmstateObjects()
	require.NotEmpty(t, deployed)
	t.Logf("CNO deployed %d kubernetes-nmstate objects: %s", len(deployed), strings.Join(names(deployed), ", "))
	return e, deployed, policy
}

// TestDisable (scenario e): mode Disabled; CNO's pruning of
// kubernetes-nmstate (prune.Schedule: what it deployed, found by its owner
// label, and no longer renders) removes the handler and the webhook and
// keeps the CRDs, the Namespace, the admission policy, the reader role and
// every policy.
//
// One handler pod cannot end yet (a finalizer of the test's holds it): the
// handler's ServiceAccount and ClusterRoleBinding stay while it is there,
// and Progressing names it. Once it is gone, CNO deletes the account; the
// proxy has another controller adopt it between CNO's list that decided to
// prune it and its delete: the delete carries the UID and resourceVersion
// it was decided on, so the API server refuses it, and the account stays
// with its new owner.
func TestDisable(t *testing.T) {
	e, deployed, policy := deployedOnBareMetal(t, options{})
	kept := keptObjects(deployed)
	pods := &corev1.PodList{}
	require.NoError(t, e.c.List(e.ctx(), pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"component": "kubernetes-nmstate-handler"}))
	require.NotEmpty(t, pods.Items)
	held := &pods.Items[0]
	require.NoError(t, e.c.Patch(e.ctx(), held, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`))))
	access := accessObjects(deployed)
	require.NotEmpty(t, access)
	// The handler's ServiceAccount is named as its DaemonSet.
	account := "/api/v1/namespaces/" + nmstate.Namespace + "/serviceaccounts/" + nmstate.HandlerDaemonSet
	var adopted atomic.Bool
	var adoptErr error
	e.proxy.SetFault(func(req *http.Request) int {
		if req.Method == http.MethodDelete && req.URL.Path == account && adopted.CompareAndSwap(false, true) {
			adoptErr = e.adoptAccount(nmstate.HandlerDaemonSet)
		}
		return 0
	})
	began := time.Now()
	e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	ds, dep := &appsv1.DaemonSet{}, &appsv1.Deployment{}
	require.True(t, waitFor(4*time.Minute, func() bool {
		return !e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && !e.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment)
	}), "CNO did not remove the handler and webhook within 4 minutes; %s", e.describeConditions())
	figure(t, "mode Disabled to the handler and webhook deleted: %s", time.Since(began).Round(100*time.Millisecond))
	avail := e.waitCondition(time.Minute, nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	t.Logf("%s: %s", nmstate.ConditionAvailable, avail.Message)
	// Pruning is asynchronous: another whole reconcile, status pass included.
	e.reconciled()
	e.requireKept(kept, policy)
	removed := e.missing(deployed)
	t.Logf("removed by CNO: %s", strings.Join(removed, ", "))
	assert.Contains(t, removed, "apps/DaemonSet "+nmstate.Namespace+"/"+nmstate.HandlerDaemonSet+" deleted")
	assert.Contains(t, removed, "apps/Deployment "+nmstate.Namespace+"/"+nmstate.WebhookDeployment+" deleted")

	require.True(t, e.exists(&corev1.Pod{}, nmstate.Namespace, held.Name), "the held handler pod is gone")
	assert.False(t, adopted.Load(), "CNO deleted the handler's ServiceAccount while one of its pods was still there")
	assert.Empty(t, e.missing(access), "CNO removed accounts or RBAC while one handler pod was still there")
	var progressing operv1.OperatorCondition
	require.True(t, waitFor(time.Minute, func() bool {
		progressing = e.operatorConditions()[nmstate.ConditionProgressing]
		return progressing.Reason == nmstate.ReasonRemoving && strings.Contains(progressing.Message, "waiting for 1 pod of")
	}), "Progressing never said which pod holds up the removal; last: %+v", progressing)

	require.NoError(t, e.c.Patch(e.ctx(), held, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
	require.True(t, waitFor(time.Minute, adopted.Load), "CNO never tried to delete the handler's ServiceAccount once its last pod was gone; %s", e.describeConditions())
	require.True(t, waitFor(time.Minute, func() bool { return !e.exists(&rbacv1.ClusterRoleBinding{}, "", "nmstate-handler") }),
		"CNO did not delete the handler's ClusterRoleBinding once its last pod was gone")
	e.proxy.SetFault(nil)
	require.NoError(t, adoptErr, "adopting the handler's ServiceAccount")
	sa := &corev1.ServiceAccount{}
	require.True(t, e.exists(sa, nmstate.Namespace, nmstate.HandlerDaemonSet), "CNO deleted the ServiceAccount adopted after its read")
	owner := metav1.GetControllerOf(sa)
	require.NotNil(t, owner)
	assert.Equal(t, "NMState", owner.Kind, "the ServiceAccount keeps its new owner")
}

// TestDisableHeldByFinalizer (scenario m): a finalizer someone else put on
// the handler DaemonSet holds it, and its pods, after mode Disabled. CNO's
// conditions say so (Available that the handler still runs, Progressing
// which finalizer holds the DaemonSet) and it keeps the handler's account
// and RBAC while the pods run. Once the finalizer is removed, everything
// goes. Degraded RemovalHung after 15 minutes is proven on the host
// (test/e2e TestFinalizedHandlerThenDisabled), whose clock a test can move.
func TestDisableHeldByFinalizer(t *testing.T) {
	e, deployed, _ := deployedOnBareMetal(t, options{})
	ds := &appsv1.DaemonSet{}
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.NoError(t, e.c.Patch(e.ctx(), ds, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`))))
	access := accessObjects(deployed)
	require.NotEmpty(t, access)

	e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	var progressing operv1.OperatorCondition
	require.True(t, waitFor(4*time.Minute, func() bool {
		progressing = e.operatorConditions()[nmstate.ConditionProgressing]
		return progressing.Reason == nmstate.ReasonRemoving && strings.Contains(progressing.Message, `daemonset nmstate-handler is held by finalizers "`+holdFinalizer+`"`)
	}), "Progressing never named the finalizer that holds the handler; last: %+v", progressing)
	// Another whole reconcile, status pass and pruning included.
	e.reconciled()
	conds := e.operatorConditions()
	assert.Contains(t, conds[nmstate.ConditionAvailable].Message, "the kubernetes-nmstate handler still runs on")
	assert.NotContains(t, conds[nmstate.ConditionAvailable].Message, "no kubernetes-nmstate handler runs")
	assert.Equal(t, operv1.ConditionFalse, conds[nmstate.ConditionDegraded].Status, "Degraded before the removal has lasted 15 minutes: %+v", conds[nmstate.ConditionDegraded])
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.NotNil(t, ds.DeletionTimestamp, "CNO did not delete the handler DaemonSet")
	assert.Empty(t, e.missing(access), "CNO removed accounts or RBAC under the held handler's pods")

	require.NoError(t, e.c.Patch(e.ctx(), ds, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
	e.touchCNO()
	require.True(t, waitFor(4*time.Minute, func() bool {
		return !e.exists(&corev1.ServiceAccount{}, nmstate.Namespace, "nmstate-handler") && !e.exists(&rbacv1.ClusterRoleBinding{}, "", "nmstate-handler")
	}), "CNO did not remove the handler's account and RBAC once its DaemonSet and pods were gone; %s", e.describeConditions())
	e.waitCondition(4*time.Minute, nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}

// adoptAccount makes the standalone operator's NMState CR the controller of
// ServiceAccount name in openshift-nmstate, in place of CNO's reference.
func (e *env) adoptAccount(name string) error {
	sa := &corev1.ServiceAccount{}
	if err := e.c.Get(e.ctx(), client.ObjectKey{Namespace: nmstate.Namespace, Name: name}, sa); err != nil {
		return err
	}
	sa.OwnerReferences = []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "nmstate-uid", Controller: ptr.To(true)}}
	return e.c.Update(e.ctx(), sa)
}

// TestOperatorConfigDeleted (scenario f): network.operator/cluster
// deleted; the real garbage collector removes what carries CNO's owner
// reference and keeps the CRDs, the Namespace, the admission policy, the
// reader role and every policy, which carry none.
func TestOperatorConfigDeleted(t *testing.T) {
	e, deployed, policy := deployedOnBareMetal(t, options{})
	kept := keptObjects(deployed)
	for o := range kept {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		require.True(t, e.exists(u, o.namespace, o.name))
		assert.Empty(t, u.GetOwnerReferences(), "%s carries no owner reference, so the garbage collector never takes it", o)
	}
	ds := &appsv1.DaemonSet{}
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.NotNil(t, metav1.GetControllerOf(ds), "the handler DaemonSet is controlled by the operator config")
	oldDS := ds.UID

	s := e.sample(kept, time.Time{})
	net := e.network()
	require.NoError(t, e.c.Delete(e.ctx(), net, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	// The garbage collector takes what the operator config owned; CNO's
	// clusterconfig controller then recreates the config from the cluster
	// Network, and CNO renders kubernetes-nmstate again.
	cur := &appsv1.DaemonSet{}
	collected := waitFor(4*time.Minute, func() bool {
		return !e.exists(cur, nmstate.Namespace, nmstate.HandlerDaemonSet) || cur.UID != oldDS
	})
	samples, problems := s.stop()
	t.Logf("%d samples while the operator config was deleted", samples)
	var missing []string
	for _, p := range problems {
		if strings.Contains(p, " deleted") || strings.Contains(p, " replaced") || strings.Contains(p, " being deleted") {
			missing = append(missing, p)
		}
	}
	assert.Empty(t, missing, "a kept object went at some sample")
	assert.True(t, collected, "the garbage collector did not collect the handler DaemonSet owned by the deleted operator config; last seen with owners %v", cur.OwnerReferences)
	e.requireKept(kept, policy)
	recreated := &unstructured.Unstructured{}
	recreated.SetGroupVersionKind(networkGVK)
	if waitFor(time.Minute, func() bool { return e.exists(recreated, "", "cluster") }) {
		t.Logf("CNO's clusterconfig controller recreated network.operator/cluster (uid %s, was %s)", recreated.GetUID(), net.GetUID())
	}
}

// touchCNO updates a ConfigMap in CNO's namespace, one of the events that
// make CNO's operconfig controller reconcile (besides the operator config's
// spec, nodes and its 3-minute resync).
func (e *env) touchCNO() {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-network-operator", Name: "cnoe2e-touch"}}
	if !e.exists(&corev1.ConfigMap{}, cm.Namespace, cm.Name) {
		require.NoError(e.t, e.c.Create(e.ctx(), cm))
		return
	}
	require.NoError(e.t, e.c.Patch(e.ctx(), cm, client.RawPatch(types.MergePatchType,
		[]byte(`{"data":{"at":"`+time.Now().Format(time.RFC3339Nano)+`"}}`))))
}

// What CNO's operconfig controller logs as a reconcile of the operator
// config begins and as it ends without an error.
const (
	reconcileBegins = "Reconciling Network.operator.openshift.io cluster"
	reconcileEnds   = "Operconfig Controller complete"
)

// reconciled touches CNO's namespace and waits until a reconcile that began
// after the touch has ended (logged its end, or another began: CNO
// reconciles the one operator config at a time), status pass and pruning
// included. A window of "nothing happened" is counted in these, not in
// seconds, so that a slow machine makes it longer, not emptier.
func (e *env) reconciled() {
	e.t.Helper()
	mark := len(e.cno.Log())
	e.touchCNO()
	ok := waitFor(4*time.Minute, func() bool {
		since := e.cno.Log()[mark:]
		began := strings.Index(since, reconcileBegins)
		if began < 0 {
			return false
		}
		rest := since[began+len(reconcileBegins):]
		return strings.Contains(rest, reconcileEnds) || strings.Contains(rest, reconcileBegins)
	})
	require.True(e.t, ok, "no reconcile of CNO's began and ended within 4 minutes of a touch; its log since:\n%s", tail(e.cno.Log()[mark:], 40))
}
