package e2e

// What only real workload controllers, a scheduler and (simulated) kubelets
// can show: where the operands land, when they count as available, how a
// rollout and a removal proceed.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolswatch "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// podNodes maps each live pod of the workload to its node.
func (k *cluster) podNodes(workload string) map[string]string {
	k.t.Helper()
	pods := &corev1.PodList{}
	require.NoError(k.t, k.c.List(k.ctx(), pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"name": workload}))
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out
}

// waitRolledOut waits until the real controllers report the handler ready on
// handlers nodes and the webhook available.
func (k *cluster) waitRolledOut(handlers int32) {
	k.t.Helper()
	var ds appsv1.DaemonSet
	var dep appsv1.Deployment
	require.True(k.t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && k.exists(&dep, nmstate.Namespace, nmstate.WebhookDeployment) &&
			ds.Status.ObservedGeneration == ds.Generation && ds.Status.NumberReady == handlers && ds.Status.DesiredNumberScheduled == handlers &&
			dep.Status.ObservedGeneration == dep.Generation && dep.Status.AvailableReplicas == *dep.Spec.Replicas
	}), "never rolled out on %d nodes; DaemonSet status %+v, Deployment status %+v", handlers, ds.Status, dep.Status)
}

// TestRolloutOnBareMetal: the handler lands on the six Linux nodes, masters
// included (the rendered tolerations), never on the Windows worker; the two
// webhook replicas on two different control-plane nodes; Available turns
// True only once the DaemonSet controller reports ready pods.
func TestRolloutOnBareMetal(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)

	// Every time Available is seen True, the DaemonSet's status as its
	// controller wrote it must already say ready.
	var early atomic.Value
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			conds, err := devcluster.Conditions(ctx, k.c)
			if err == nil && conds[nmstate.ConditionAvailable].Status == operv1.ConditionTrue {
				ds := &appsv1.DaemonSet{}
				if err := k.c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); err == nil && ds.Status.NumberAvailable == 0 {
					early.Store(ds.Status)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	cancel()
	wg.Wait()
	assert.Nil(t, early.Load(), "Available was True while the DaemonSet controller reported no available handler")
	k.waitRolledOut(6)

	handlerNodes := sets.New[string]()
	for _, n := range k.podNodes(nmstate.HandlerDaemonSet) {
		handlerNodes.Insert(n)
	}
	assert.Equal(t, sets.New("master-0", "master-1", "master-2", "worker-0", "worker-1", "worker-2"), handlerNodes,
		"a handler on every Linux node, the tainted masters included; none on windows-0")
	webhookNodes := sets.New[string]()
	for _, n := range k.podNodes(nmstate.WebhookDeployment) {
		webhookNodes.Insert(n)
	}
	assert.Equal(t, 2, webhookNodes.Len(), "two webhook replicas on two different nodes")
	assert.True(t, sets.New("master-0", "master-1", "master-2").IsSuperset(webhookNodes),
		"the webhook runs on control-plane nodes: %v", sets.List(webhookNodes))
}

// TestRolloutSingleNode: on a single-node cluster one webhook replica fits
// (two could not spread), and the one handler is ready.
func TestRolloutSingleNode(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.SingleNode()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.SingleReplicaTopologyMode, configv1.SingleReplicaTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitRolledOut(1)
	dep := &appsv1.Deployment{}
	require.True(t, k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment))
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	assert.Equal(t, map[string]string{}, mapValuesNot(k.podNodes(nmstate.WebhookDeployment), "sno-0"), "the webhook runs on the one node")
	assert.Len(t, k.podNodes(nmstate.HandlerDaemonSet), 1)
}

func mapValuesNot(m map[string]string, v string) map[string]string {
	out := map[string]string{}
	for k, got := range m {
		if got != v {
			out[k] = got
		}
	}
	return out
}

// TestRolloutNoHandlerNodes: a handler nodeSelector no node matches leaves
// the DaemonSet controller nothing to schedule, and the conditions say so.
func TestRolloutNoHandlerNodes(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"example.com/network": "nmstate"}}})
	k.startHost()
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonNoHandlerNodes)
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, ds.Generation, ds.Status.ObservedGeneration, "the DaemonSet controller has seen it")
	assert.Zero(t, ds.Status.DesiredNumberScheduled)
	assert.Empty(t, k.podNodes(nmstate.HandlerDaemonSet))
}

// TestRolloutHung: a node whose pods never become ready holds the rollout;
// after the threshold Degraded says RolloutHung. The host's clock is moved
// past the threshold instead of waiting 15 minutes, and it rechecks every
// second here because a stuck rollout sends no event.
func TestRolloutHung(t *testing.T) {
	hung := devcluster.LinuxWorker("worker-hung")
	hung.PodsNeverReady = true
	k := startCluster(t, clusterOption{nodes: append(devcluster.BareMetalNodes(), hung)})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	var offset atomic.Int64
	k.startHost(func(o *controller.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		o.RecheckInterval = time.Second
	})
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)
	var ds appsv1.DaemonSet
	require.True(t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Status.DesiredNumberScheduled == 7 && ds.Status.NumberReady == 6
	}), "the real rollout stops at 6 of 7: %+v", ds.Status)
	assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status, "not hung before the threshold")

	offset.Store(int64(nmstate.RolloutHungAfter + time.Minute))
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonRolloutHung)
	assert.Contains(t, k.conditions()[nmstate.ConditionDegraded].Message, "handler ready on 6 of 7 nodes")
}

// TestRolloutImageBump: a new handler image rolls the DaemonSet with at most
// one pod in six (10%, rounded up) unavailable at any moment, seen through a
// watch of the pods.
func TestRolloutImageBump(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	stop := k.runHost(k.cfg)
	k.waitRolledOut(6)

	cs, err := kubernetes.NewForConfig(k.cfg)
	require.NoError(t, err)
	selector := "name=" + nmstate.HandlerDaemonSet
	list, err := cs.CoreV1().Pods(nmstate.Namespace).List(k.ctx(), metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	w, err := toolswatch.NewRetryWatcherWithContext(k.ctx(), list.ResourceVersion, &toolsWatcher{cs: cs, selector: selector})
	require.NoError(t, err)
	defer w.Stop()
	pods := map[string]*corev1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].Name] = &list.Items[i]
	}
	const newImage = "quay.io/openshift/origin-kubernetes-nmstate-handler:e2e-new"
	require.NoError(t, stop())
	k.runHost(k.cfg, withParams(func(cfg nmstate.Config, c nmstate.Cluster) nmstate.RenderParams {
		return nmstate.NewRenderParams(cfg, c, newImage, "4.99.0-e2e")
	}))

	// One handler per node: six slots, and a slot without a ready, live pod
	// is unavailable.
	maxUnavailable := 0
	deadline := time.After(2 * time.Minute)
	for {
		ready, readyNew := 0, 0
		for _, p := range pods {
			if p.DeletionTimestamp == nil && podReady(p) {
				ready++
				if p.Spec.Containers[0].Image == newImage {
					readyNew++
				}
			}
		}
		maxUnavailable = max(maxUnavailable, 6-ready)
		if readyNew == 6 {
			break
		}
		select {
		case ev := <-w.ResultChan():
			p, ok := ev.Object.(*corev1.Pod)
			require.True(t, ok, "unexpected watch event %v", ev)
			if ev.Type == watch.Deleted {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = p
			}
		case <-deadline:
			t.Fatalf("the rollout did not finish in 2 minutes; pods: %v", imagesOf(pods))
		}
	}
	assert.LessOrEqual(t, maxUnavailable, 1, "at most 10%% of six handlers (one) unavailable at once")
	assert.Equal(t, 1, maxUnavailable, "the rollout did replace pods one at a time")
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
}

type toolsWatcher struct {
	cs       kubernetes.Interface
	selector string
}

func (w *toolsWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.LabelSelector = w.selector
	return w.cs.CoreV1().Pods(nmstate.Namespace).Watch(ctx, opts)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func imagesOf(pods map[string]*corev1.Pod) map[string]string {
	out := map[string]string{}
	for n, p := range pods {
		out[n] = p.Spec.Containers[0].Image
	}
	return out
}

// TestRolloutDisableReEnable: with upstream's binary as worker-0's handler,
// disabling removes the workloads and the garbage collector their pods;
// every policy and the CRDs stay; re-enabling brings a new handler pod, and
// upstream's binary started for it applies the same policy's next edit.
func TestRolloutDisableReEnable(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitRolledOut(6)
	o := k.startOperands()
	handler := o.run(nmstate.HandlerDaemonSet, "worker-0")
	out, err := k.kubectlApply(realPolicy)
	require.NoError(t, err, out)
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	policyUID := k.nncpObject("worker-0-dummy").GetUID()

	out, err = k.kubectl("patch", "network.operator", "cluster", "--type=merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	require.NoError(t, err, out)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitGone(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment)
	require.True(t, waitUntil(func() bool {
		return len(k.podNodes(nmstate.HandlerDaemonSet)) == 0 && len(k.podNodes(nmstate.WebhookDeployment)) == 0
	}), "the garbage collector removes the operands' pods")
	require.NoError(t, handler.Stop(), "the pod is gone: its container stops, as the kubelet would stop it")
	for _, crd := range nmstate.CRDNames {
		assert.True(t, k.crdKept(crd), "CRD %s is kept", crd)
	}
	assert.Equal(t, policyUID, k.nncpObject("worker-0-dummy").GetUID(), "the policy is kept, the very same object")

	out, err = k.kubectl("patch", "network.operator", "cluster", "--type=merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	require.NoError(t, err, out)
	k.waitRolledOut(6)
	o.run(nmstate.HandlerDaemonSet, "worker-0")
	out, err = k.kubectl("patch", "nncp", "worker-0-dummy", "--type=merge", "-p", `{"spec":{"desiredState":{"interfaces":[{"name":"dummy0","type":"dummy","state":"down"}]}}}`)
	require.NoError(t, err, out)
	require.True(t, waitUntil(func() bool { return o.applied(`"state":"down"`) }), "the new handler applies the kept policy's edit")
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	assert.Equal(t, policyUID, k.nncpObject("worker-0-dummy").GetUID())
}
