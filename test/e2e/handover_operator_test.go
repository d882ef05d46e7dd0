package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// handlerComponent is the label every kubernetes-nmstate handler carries,
// ours (bindata 006-handler.yaml) and the standalone operator's (upstream's
// deploy/handler/operator.yaml): the handler finds its peers by it in every
// namespace (pkg/node NodesRunningNmstate), so it, not the name (which the
// operator prefixes with HANDLER_PREFIX), is what makes a DaemonSet a handler.
var handlerComponent = client.MatchingLabels{"component": "kubernetes-nmstate-handler"}

// TestHandoverFromRealOperatorNamespaces: upstream's cmd/operator v0.86.0
// runs as a process with the templates its image carries; an NMState CR
// makes it deploy its handler; then the CR is deleted and the operator
// stopped, as an OLM uninstall does. Run with the operator deploying into
// each namespace it is installed with in practice, and once with the host
// down while the operator deploys:
//
//   - openshift-nmstate, the namespace of OpenShift's OLM package and ours:
//     the same names, so the operator may take over the host's objects
//     (then the host releases them) or the host deletes its own first;
//   - nmstate, the namespace upstream's bundle defaults to: beside ours, so
//     two DaemonSets run on the same nodes unless the host steps aside
//     first. Nothing the host watches changes when the CR is deleted there,
//     so it runs with the production recheck interval and takes over on it.
//   - host-down: openshift-nmstate with the host stopped (a CNO restart or
//     upgrade, here up to 30 seconds) when the CR is created, so the
//     operator's server-side apply lands on the host's live objects.
//
// In each, once the host has stepped aside the operator's handler must be
// ready within a wait (nothing enforces policies in between), and nothing
// the CR owns may keep the host's labels or fields. Watches on handler
// DaemonSets and handler pods in every namespace, from before the operator
// starts until the host has its handler back, record the most DaemonSets
// that existed at once (asserted: one), the longest time without any, and
// the most pods of different DaemonSets, not marked for deletion, on one
// node at once (logged: the garbage collector removes a deleted
// DaemonSet's pods a moment after the next one's are created; both take
// the same node lock, which is asserted).
func TestHandoverFromRealOperatorNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name, namespace string
		hostDown        bool
	}{
		{name: "openshift-nmstate", namespace: nmstate.Namespace},
		{name: "nmstate", namespace: "nmstate"},
		{name: "host-down", namespace: nmstate.Namespace, hostDown: true},
	} {
		t.Run(tc.name, func(t *testing.T) { handoverFromRealOperator(t, tc.namespace, tc.hostDown) })
	}
}

func handoverFromRealOperator(t *testing.T, operatorNamespace string, hostDown bool) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), extraCRDs: []string{nmstatesCRD}})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	var opts []hostOption
	if operatorNamespace != nmstate.Namespace {
		// The production default: the only thing that notices the CR gone.
		opts = append(opts, func(o *controller.Options) { o.RecheckInterval = 30 * time.Second })
	}
	stopHost := k.runHost(k.cfg, opts...)
	k.waitOperandsSettled(6, 2)
	out, err := k.kubectlApply(realPolicy)
	require.NoError(t, err, out)
	policyUID := k.nncpObject("worker-0-dummy").GetUID()
	var hostDS, ds0 appsv1.DaemonSet
	require.True(t, k.exists(&hostDS, nmstate.Namespace, nmstate.HandlerDaemonSet))

	rec := k.recordHandovers()
	if hostDown {
		require.NoError(t, stopHost())
	}
	op := k.runRealOperator(operatorNamespace)
	start := time.Now()
	out, err = k.kubectlApply(nmstateCR)
	require.NoError(t, err, out)
	if hostDown {
		// The operator's apply lands on the host's live objects. Hold the
		// host down a while (a CNO restart): until the operator has failed
		// 13 times (its next retry would then come 5ms<<12, 20s, later), or
		// for 10 seconds if it does not fail that often.
		var degraded string
		require.True(t, waitUntil(func() bool {
			degraded = k.nmstateCondition("Degraded")
			return degraded != ""
		}), "the operator never reported on the NMState CR; it failed %d reconciles", op.failedReconciles())
		waitFor(10*time.Second-time.Since(start), func() bool { return op.failedReconciles() >= 13 })
		t.Logf("with the host down for %s the operator failed %d reconciles; the NMState CR's Degraded condition: %s",
			time.Since(start).Round(time.Second), op.failedReconciles(), degraded)
		// The webhook's strategy is upstream's (Recreate), so the operator's
		// apply over the host's live Deployment is valid and it adopts the
		// host's objects at once instead of backing off.
		assert.NotContains(t, degraded, "may not be specified when strategy type is 'Recreate'")
		require.True(t, k.exists(&ds0, nmstate.Namespace, nmstate.HandlerDaemonSet))
		t.Logf("the handler DaemonSet with the host down: %s, owners %v, image %s", ds0.UID, ds0.OwnerReferences, ds0.Spec.Template.Spec.Containers[0].Image)
		k.runHost(k.cfg, opts...)
		start = time.Now()
	}
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	t.Logf("the host stepped aside %s after the NMState CR was created (or the host restarted)", time.Since(start).Round(time.Millisecond))

	// Once the host has stepped aside nothing enforces policies until
	// the operator's handler is ready. That takes about two seconds here
	// when the host is up throughout; allow five times that, and beyond it
	// keep waiting to see how long it does take.
	var ds appsv1.DaemonSet
	require.True(t, waitFor(3*time.Minute, func() bool {
		return k.exists(&ds, operatorNamespace, nmstate.HandlerDaemonSet) && ds.Spec.Template.Spec.Containers[0].Image == operatorHandlerImage &&
			ds.Status.ObservedGeneration == ds.Generation && ds.Status.NumberReady == 6
	}), "the operator's handler never rolled out: %+v", ds.Status)
	took := time.Since(start)
	t.Logf("the operator's handler was ready %s after that", took.Round(time.Millisecond))
	require.NotEmpty(t, ds.OwnerReferences)
	assert.Equal(t, "NMState", ds.OwnerReferences[0].Kind, "the DaemonSet is the operator's")
	assert.Equal(t, operatorHandlerImage, ds.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, nodeLock(t, &hostDS), nodeLock(t, &ds), "the host's handler and the operator's take the same lock on the node")
	// Nothing the operator owns keeps a label or a field of the host's:
	// whatever the operator adopted (an owner reference), the host releases
	// with an empty server-side apply instead of pruning it.
	var leftovers []string
	released := waitUntil(func() bool {
		leftovers = k.hostLeftovers(operatorNamespace)
		return len(leftovers) == 0
	})
	assert.True(t, released, "objects the NMState CR owns that keep the host's labels or fields: %v", leftovers)
	if operatorNamespace != nmstate.Namespace {
		var gone appsv1.DaemonSet
		assert.False(t, k.exists(&gone, nmstate.Namespace, nmstate.HandlerDaemonSet), "the host's DaemonSet is gone")
		var dep appsv1.Deployment
		assert.False(t, k.exists(&dep, nmstate.Namespace, nmstate.WebhookDeployment), "the host's webhook is gone")
	}
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)

	// OLM's uninstall: the CR first (the operator's objects go with it,
	// by owner reference), then the operator.
	out, err = k.kubectl("delete", "nmstate", "nmstate", "--wait=true")
	require.NoError(t, err, out)
	op.stop()
	start = time.Now()
	var last operv1.OperatorCondition
	require.True(t, waitFor(45*time.Second, func() bool {
		last = k.conditions()[nmstate.ConditionAvailable]
		return last.Status == operv1.ConditionTrue && last.Reason == nmstate.ReasonPlatformDefault
	}), "the host never took over again; Available: %+v", last)
	t.Logf("the host was back %s after the operator stopped", time.Since(start).Round(time.Millisecond))
	// An adopted DaemonSet outlives its owner for a moment, until the
	// garbage collector removes it and the host creates its own again.
	require.True(t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && len(ds.OwnerReferences) == 0 &&
			ds.Spec.Template.Spec.Containers[0].Image == handlerImage
	}), "the host's own DaemonSet, not one the NMState CR left behind: owners %v", ds.OwnerReferences)
	k.waitOperandsSettled(6, 2)

	r := rec.stop()
	t.Logf("handler DaemonSets seen: %s", strings.Join(r.daemonSets, ", "))
	t.Logf("most pods of different handler DaemonSets on one node at once: %d, for at most %s (%s)", r.maxPerNode, r.longestPods.Round(time.Millisecond), r.worst)
	t.Logf("longest time without any handler DaemonSet: %s", r.longestNone.Round(time.Millisecond))
	assert.Equal(t, 1, r.maxDaemonSets, "at most one handler DaemonSet at any moment; %d at once for %s: %s", r.maxDaemonSets, r.longestDaemonSets, r.overlap)
	assert.Equal(t, policyUID, k.nncpObject("worker-0-dummy").GetUID(), "the policy survived the handover")
}

// nmstateCondition is the message of the NMState CR's condition typ, with
// its status, or "" before the operator has written it.
func (k *cluster) nmstateCondition(typ string) string {
	k.t.Helper()
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NMState"})
	require.NoError(k.t, k.c.Get(k.ctx(), client.ObjectKey{Name: "nmstate"}, cr))
	conditions, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
		}
	}
	return ""
}

// waitFor is waitUntil with its own deadline.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(tick)
	}
	return cond()
}

// nodeLock is the file on the node that the handler locks
// (NMSTATE_INSTANCE_NODE_LOCK_FILE, through its hostPath mount): two
// handlers with the same one never work on a node at once.
func nodeLock(t *testing.T, ds *appsv1.DaemonSet) string {
	t.Helper()
	c := ds.Spec.Template.Spec.Containers[0]
	file := ""
	for _, e := range c.Env {
		if e.Name == "NMSTATE_INSTANCE_NODE_LOCK_FILE" {
			file = e.Value
		}
	}
	require.NotEmpty(t, file, "%s/%s sets no node lock", ds.Namespace, ds.Name)
	for _, m := range c.VolumeMounts {
		rel, err := filepath.Rel(m.MountPath, file)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		for _, v := range ds.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.HostPath != nil {
				return filepath.Join(v.HostPath.Path, rel)
			}
		}
	}
	require.Failf(t, "no node lock", "%s/%s keeps %s on no hostPath volume", ds.Namespace, ds.Name, file)
	return ""
}

// ownedByNMState lists the workloads, RBAC and webhook objects that the
// NMState CR owns (what the operator created or took over).
func (k *cluster) ownedByNMState(namespace string) []client.Object {
	k.t.Helper()
	var out []client.Object
	for _, list := range []client.ObjectList{&appsv1.DaemonSetList{}, &appsv1.DeploymentList{}, &corev1.ServiceAccountList{},
		&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{},
		&admissionregv1.MutatingWebhookConfigurationList{}, &networkingv1.NetworkPolicyList{}, &corev1.ServiceList{}} {
		// The namespace is ignored for cluster-scoped kinds.
		require.NoError(k.t, k.c.List(k.ctx(), list, client.InNamespace(namespace)))
		items, err := meta.ExtractList(list)
		require.NoError(k.t, err)
		for _, item := range items {
			obj := item.(client.Object)
			for _, ref := range obj.GetOwnerReferences() {
				if ref.Kind == "NMState" {
					gvk, err := k.c.GroupVersionKindFor(obj)
					require.NoError(k.t, err)
					obj.GetObjectKind().SetGroupVersionKind(gvk)
					out = append(out, obj)
				}
			}
		}
	}
	return out
}

// runRealOperator starts upstream's operator (devcluster.StartOperator)
// with the cluster admin's kubeconfig, and first creates its Deployment as
// OLM does (createOperatorDeployment), which kwok makes available: what the
// plugin reads of it. Its stop is OLM's uninstall: it sends SIGTERM, waits,
// and deletes the Deployment; the process's stop also runs when the test
// ends, which logs the operator's output on a failure.
func (k *cluster) runRealOperator(namespace string) *realOperator {
	t := k.t
	t.Helper()
	// The plugin defers to an NMState CR only while its operator's
	// Deployment is available.
	operator := k.createOperatorDeployment(t, namespace, 1)
	require.True(t, waitUntil(func() bool {
		return k.exists(operator, namespace, operator.Name) && operator.Status.AvailableReplicas > 0
	}), "the operator's Deployment never became available: %+v", operator.Status)
	p, err := devcluster.StartOperator(assetsDir(t), t.TempDir(), k.kubeconfig, namespace)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = p.Stop()
		if t.Failed() {
			t.Logf("--- the operator's output:\n%s", p.Log())
		}
	})
	stop := func() {
		_ = p.Stop()
		require.NoError(t, client.IgnoreNotFound(k.c.Delete(k.ctx(), operator)), "deleting the operator's Deployment")
	}
	return &realOperator{stop: stop, logPath: p.LogPath}
}

type realOperator struct {
	stop    func()
	logPath string
}

// failedReconciles counts the operator's failed reconciles so far: each
// doubles the delay before its next retry (controller-runtime's default
// limiter, 5ms to 1000s), and the objects the host deletes carry no owner
// reference the operator watches, so only that retry sees them gone.
func (o *realOperator) failedReconciles() int {
	b, _ := os.ReadFile(o.logPath)
	return strings.Count(string(b), `"msg":"Reconciler error"`)
}

type handoverRecord struct {
	maxDaemonSets     int
	overlap           string        // the DaemonSets when more than one existed
	longestDaemonSets time.Duration // the longest time more than one existed
	daemonSets        []string      // every handler DaemonSet seen, in order
	maxPerNode        int
	worst             string        // the node and pods when more than one ran there
	longestPods       time.Duration // the longest time pods of two ran on one node
	longestNone       time.Duration // the longest time no handler DaemonSet existed
}

type handlerPod struct {
	name, node string
	owner      types.UID
}

type handoverRecorder struct {
	stop func() handoverRecord
}

// recordHandovers watches handler DaemonSets and handler pods in every
// namespace until stop. A pod counts as running on its node until it is
// marked for deletion; pods of one DaemonSet replacing each other in a
// rolling update are not an overlap, only pods of different DaemonSets are.
// A watch that ends before stop fails the test: what it missed is unknown.
func (k *cluster) recordHandovers() handoverRecorder {
	t := k.t
	t.Helper()
	wc, err := client.NewWithWatch(k.cfg, client.Options{Scheme: k.c.Scheme()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())

	var mu sync.Mutex
	var rec handoverRecord
	daemonSets := map[types.UID]string{}
	pods := map[types.UID]handlerPod{}
	seen := map[types.UID]bool{}
	var dsSince time.Time               // when more than one DaemonSet began to exist
	var noneSince time.Time             // when the last DaemonSet went
	podsSince := map[string]time.Time{} // by node: when pods of two began to run there
	noteDaemonSets := func() {
		now := time.Now()
		switch {
		case len(daemonSets) == 0 && noneSince.IsZero():
			noneSince = now
		case len(daemonSets) > 0 && !noneSince.IsZero():
			rec.longestNone = max(rec.longestNone, now.Sub(noneSince))
			noneSince = time.Time{}
		}
		if len(daemonSets) <= 1 {
			if !dsSince.IsZero() {
				rec.longestDaemonSets = max(rec.longestDaemonSets, now.Sub(dsSince))
				dsSince = time.Time{}
			}
			rec.maxDaemonSets = max(rec.maxDaemonSets, len(daemonSets))
			return
		}
		if dsSince.IsZero() {
			dsSince = now
		}
		if len(daemonSets) > rec.maxDaemonSets {
			rec.maxDaemonSets = len(daemonSets)
			var names []string
			for _, n := range daemonSets {
				names = append(names, n)
			}
			sort.Strings(names)
			rec.overlap = strings.Join(names, ", ")
		}
	}
	notePods := func(node string) {
		owners := map[types.UID][]string{}
		for _, p := range pods {
			if p.node == node {
				owners[p.owner] = append(owners[p.owner], p.name)
			}
		}
		now := time.Now()
		if len(owners) <= 1 {
			if since, ok := podsSince[node]; ok {
				rec.longestPods = max(rec.longestPods, now.Sub(since))
				delete(podsSince, node)
			}
			rec.maxPerNode = max(rec.maxPerNode, len(owners))
			return
		}
		if _, ok := podsSince[node]; !ok {
			podsSince[node] = now
		}
		if len(owners) > rec.maxPerNode {
			rec.maxPerNode = len(owners)
			rec.worst = fmt.Sprintf("%s: %v", node, owners)
		}
	}
	// An overlap still going on when the recording stops counts until then.
	closeOverlaps := func() {
		now := time.Now()
		if !dsSince.IsZero() {
			rec.longestDaemonSets = max(rec.longestDaemonSets, now.Sub(dsSince))
		}
		if !noneSince.IsZero() {
			rec.longestNone = max(rec.longestNone, now.Sub(noneSince))
		}
		for _, since := range podsSince {
			rec.longestPods = max(rec.longestPods, now.Sub(since))
		}
	}

	dsList := &appsv1.DaemonSetList{}
	require.NoError(t, k.c.List(k.ctx(), dsList, handlerComponent))
	for _, d := range dsList.Items {
		daemonSets[d.UID] = d.Namespace + "/" + d.Name
		seen[d.UID] = true
		rec.daemonSets = append(rec.daemonSets, fmt.Sprintf("%s/%s (%s)", d.Namespace, d.Name, d.UID))
	}
	noteDaemonSets()
	podList := &corev1.PodList{}
	require.NoError(t, k.c.List(k.ctx(), podList, handlerComponent))
	for _, p := range podList.Items {
		if owner := metav1.GetControllerOf(&p); owner != nil && p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			pods[p.UID] = handlerPod{name: p.Namespace + "/" + p.Name, node: p.Spec.NodeName, owner: owner.UID}
		}
	}
	for _, p := range pods {
		notePods(p.node)
	}

	dsWatch, err := wc.Watch(ctx, &appsv1.DaemonSetList{}, handlerComponent, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: dsList.ResourceVersion}})
	require.NoError(t, err)
	podWatch, err := wc.Watch(ctx, &corev1.PodList{}, handlerComponent, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: podList.ResourceVersion}})
	require.NoError(t, err)
	var endedEarly []string
	var wg sync.WaitGroup
	follow := func(what string, w watch.Interface, handle func(watch.Event)) {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok || ev.Type == watch.Error {
					mu.Lock()
					if ctx.Err() == nil {
						endedEarly = append(endedEarly, fmt.Sprintf("%s watch: %+v", what, ev.Object))
					}
					mu.Unlock()
					return
				}
				mu.Lock()
				handle(ev)
				mu.Unlock()
			}
		}
	}
	wg.Add(2)
	go follow("DaemonSet", dsWatch, func(ev watch.Event) {
		d, ok := ev.Object.(*appsv1.DaemonSet)
		if !ok {
			return
		}
		if ev.Type == watch.Deleted {
			delete(daemonSets, d.UID)
			noteDaemonSets()
			return
		}
		daemonSets[d.UID] = d.Namespace + "/" + d.Name
		if !seen[d.UID] {
			seen[d.UID] = true
			rec.daemonSets = append(rec.daemonSets, fmt.Sprintf("%s/%s (%s)", d.Namespace, d.Name, d.UID))
		}
		noteDaemonSets()
	})
	go follow("Pod", podWatch, func(ev watch.Event) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return
		}
		owner := metav1.GetControllerOf(p)
		if ev.Type == watch.Deleted || p.DeletionTimestamp != nil || owner == nil || p.Spec.NodeName == "" {
			if old, ok := pods[p.UID]; ok {
				delete(pods, p.UID)
				notePods(old.node)
			}
			return
		}
		pods[p.UID] = handlerPod{name: p.Namespace + "/" + p.Name, node: p.Spec.NodeName, owner: owner.UID}
		notePods(p.Spec.NodeName)
	})

	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			dsWatch.Stop()
			podWatch.Stop()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return handoverRecorder{stop: func() handoverRecord {
		stop()
		mu.Lock()
		defer mu.Unlock()
		closeOverlaps()
		require.Empty(t, endedEarly, "a watch ended before the handover did")
		return rec
	}}
}

// hostLeftovers lists what the NMState CR owns that still carries the host's
// labels or a field the host's manager owns.
func (k *cluster) hostLeftovers(operatorNamespace string) []string {
	var out []string
	for _, obj := range k.ownedByNMState(operatorNamespace) {
		var managers []string
		for _, f := range obj.GetManagedFields() {
			managers = append(managers, f.Manager)
		}
		_, owned := obj.GetLabels()[nmstate.OwnerLabel]
		_, status := obj.GetLabels()["networkoperator.openshift.io/generates-operator-status"]
		if owned || status || slices.Contains(managers, controller.FieldManager) {
			out = append(out, fmt.Sprintf("%s %s (labels %v, managers %v)", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), obj.GetLabels(), managers))
		}
	}
	return out
}

// The standalone operator's handler image and the NMState CR of the
// handover tests (handover_operator_test.go).
const (
	operatorHandlerImage = devcluster.OperatorHandlerImage
	nmstateCR            = `apiVersion: nmstate.io/v1
kind: NMState
metadata:
  name: nmstate
`
)
