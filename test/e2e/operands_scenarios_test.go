package e2e

// Operand scenarios on the simulated clusters: real kube-controller-manager
// (DaemonSet, Deployment, ReplicaSet, garbage collector), kube-scheduler and
// kwok playing the kubelets. Every assertion is on what those controllers
// wrote, not on what the host rendered, and the history of a rollout is read
// from watches, so that a state that lasted one update is not missed.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestOperandsPlacementBareMetal: on the sample bare-metal cluster the
// scheduler and the DaemonSet controller put a handler on each of the six
// Linux nodes, the three tainted masters included (the rendered
// tolerations), and none on windows-0; the two webhook replicas run on two
// different control-plane nodes.
//
// KubernetesNMStateAvailable must wait for the DaemonSet controller to
// report ready handlers. Unheld, kwok makes every pod ready within the
// host's first reconcile, so the host never writes a status while handlers
// are missing and no observation could tell. The test therefore holds the
// handler back as a cluster might (an admission policy refusing its pods,
// as a quota would): the host then reports the webhook available and no
// handler ready, and Available must stay False. Once released, the watch
// history, ordered by resourceVersion (one etcd, so one revision sequence),
// shows what the controllers had written before each status the host
// wrote. The hold is kept short: the DaemonSet controller backs off
// exponentially on refused creates (about 5s after ten).
func TestOperandsPlacementBareMetal(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	releaseHandler := k.holdPods(nmstate.HandlerDaemonSet)
	history := k.recordEvents(networkList(), &appsv1.DaemonSetList{}, &appsv1.DeploymentList{})
	k.startHost()

	var conds map[string]operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		conds = k.conditions()
		return strings.Contains(conds[nmstate.ConditionProgressing].Message, "webhook 2 of 2 replicas available")
	}), "the host never reported the webhook available; Progressing: %+v", conds[nmstate.ConditionProgressing])
	assert.Contains(t, conds[nmstate.ConditionProgressing].Message, "handler updated on 0 of 6 nodes, ready on 0", "the handler is held")
	available := conds[nmstate.ConditionAvailable]
	assert.Equal(t, operv1.ConditionFalse, available.Status, "no handler is ready, so no policy can be applied: not Available: %+v", available)
	assert.Equal(t, nmstate.ReasonDeploying, available.Reason)
	releaseHandler()

	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitOperandsSettled(6, 2)
	events := history.stop()

	// Every status the host wrote, against what the controllers had written
	// before it.
	var ds *appsv1.DaemonSet
	var dep *appsv1.Deployment
	var dsNotReadyBefore bool
	var firstAvailable *unstructured.Unstructured
	var early []string
	for _, e := range events {
		switch o := e.obj.(type) {
		case *appsv1.DaemonSet:
			ds = o
			if firstAvailable == nil && o.Status.ObservedGeneration == o.Generation && o.Status.DesiredNumberScheduled == 6 && o.Status.NumberReady == 0 {
				dsNotReadyBefore = true
			}
		case *appsv1.Deployment:
			dep = o
		case *unstructured.Unstructured:
			if conditionsOf(t, o)[nmstate.ConditionAvailable].Status != operv1.ConditionTrue {
				continue
			}
			if firstAvailable == nil {
				firstAvailable = o
				require.NotNil(t, ds, "the DaemonSet existed when Available was written")
				require.NotNil(t, dep, "the Deployment existed when Available was written")
				t.Logf("Available first written at resourceVersion %s with the handler ready on %d of %d nodes and %d webhook replicas available",
					o.GetResourceVersion(), ds.Status.NumberReady, ds.Status.DesiredNumberScheduled, dep.Status.AvailableReplicas)
			}
			if ds.Status.ObservedGeneration != ds.Generation || ds.Status.NumberReady == 0 || ds.Status.NumberAvailable == 0 ||
				dep.Status.ObservedGeneration != dep.Generation || dep.Status.AvailableReplicas == 0 {
				early = append(early, fmt.Sprintf("resourceVersion %s: DaemonSet generation %d, status %+v; Deployment generation %d, status %+v",
					o.GetResourceVersion(), ds.Generation, ds.Status, dep.Generation, dep.Status))
			}
		}
	}
	require.NotNil(t, firstAvailable, "the watch saw Available written True")
	require.True(t, dsNotReadyBefore, "the DaemonSet controller was seen reporting 0 of 6 ready before Available: the check is not vacuous")
	assert.Empty(t, early, "Available True only once the DaemonSet and Deployment controllers, having seen the current spec, report ready handlers and an available webhook")

	nodes := &corev1.NodeList{}
	require.NoError(t, k.c.List(k.ctx(), nodes))
	linux, controlPlane := sets.New[string](), sets.New[string]()
	for _, n := range nodes.Items {
		if n.Labels["kubernetes.io/os"] == "linux" {
			linux.Insert(n.Name)
		}
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			controlPlane.Insert(n.Name)
			require.True(t, slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
				return t.Key == "node-role.kubernetes.io/master" && t.Effect == corev1.TaintEffectNoSchedule
			}), "control-plane node %s is tainted, so a handler there proves the tolerations", n.Name)
		}
	}
	require.Equal(t, sets.New("master-0", "master-1", "master-2", "worker-0", "worker-1", "worker-2"), linux)

	handlers := k.livePods(nmstate.HandlerDaemonSet)
	perNode := map[string]int{}
	for _, p := range handlers {
		perNode[p.Spec.NodeName]++
		assert.True(t, isPodReady(p), "handler %s on %s is ready", p.Name, p.Spec.NodeName)
	}
	assert.Equal(t, map[string]int{"master-0": 1, "master-1": 1, "master-2": 1, "worker-0": 1, "worker-1": 1, "worker-2": 1}, perNode,
		"exactly one handler on each Linux node, the tainted masters included, none on windows-0")

	webhooks := k.livePods(nmstate.WebhookDeployment)
	require.Len(t, webhooks, 2, "two webhook replicas")
	webhookNodes := sets.New[string]()
	for _, p := range webhooks {
		webhookNodes.Insert(p.Spec.NodeName)
		assert.True(t, isPodReady(p), "webhook %s is ready", p.Name)
	}
	assert.Equal(t, 2, webhookNodes.Len(), "the two replicas run on different nodes: %v", sets.List(webhookNodes))
	assert.True(t, controlPlane.IsSuperset(webhookNodes), "the webhook runs on control-plane nodes (%v): %v", sets.List(controlPlane), sets.List(webhookNodes))
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}

// TestOperandsSingleReplica: on single-node OpenShift one webhook replica is
// rendered; it schedules on the one node, which is also a worker, and
// becomes available. No PodDisruptionBudget is rendered (minAvailable 1 of 1
// would block every drain of the node). One handler, Available True.
func TestOperandsSingleReplica(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.SingleNode()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.SingleReplicaTopologyMode, configv1.SingleReplicaTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitOperandsSettled(1, 1)

	dep := &appsv1.Deployment{}
	require.True(t, k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment))
	assert.Equal(t, int32(1), ptr.Deref(dep.Spec.Replicas, 0), "one webhook replica on a single node")
	assert.Equal(t, int32(1), dep.Status.AvailableReplicas, "and the Deployment controller reports it available")
	assert.False(t, k.exists(&policyv1.PodDisruptionBudget{}, nmstate.Namespace, nmstate.WebhookDeployment),
		"no PodDisruptionBudget for a single replica")

	webhooks := k.livePods(nmstate.WebhookDeployment)
	require.Len(t, webhooks, 1)
	assert.Equal(t, "sno-0", webhooks[0].Spec.NodeName)
	assert.True(t, isPodReady(webhooks[0]))
	handlers := k.livePods(nmstate.HandlerDaemonSet)
	require.Len(t, handlers, 1, "exactly one handler")
	assert.Equal(t, "sno-0", handlers[0].Spec.NodeName)
	assert.True(t, isPodReady(handlers[0]))
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}

// TestOperandsNoHandlerNodes: a handler nodeSelector that matches no node
// leaves the DaemonSet controller nothing to schedule (desiredNumberScheduled
// 0 for the current generation), and the conditions say so. Labelling a
// node with kubectl, as the message suggests a user would, recovers without
// any change to the Network.
func TestOperandsNoHandlerNodes(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"example.com/nmstate": "yes"}}})
	k.startHost()

	degraded := k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonNoHandlerNodes)
	assert.Contains(t, degraded.Message, "spec.kubernetesNMState.handlerPlacement")
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonNoHandlerNodes)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonNoHandlerNodes)
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, ds.Generation, ds.Status.ObservedGeneration, "the DaemonSet controller has seen the selector")
	assert.Zero(t, ds.Status.DesiredNumberScheduled)
	assert.Equal(t, map[string]string{"example.com/nmstate": "yes", "kubernetes.io/os": "linux"}, ds.Spec.Template.Spec.NodeSelector)
	out, err := k.kubectl("-n", nmstate.Namespace, "get", "daemonset", nmstate.HandlerDaemonSet, "-o", "jsonpath={.status.desiredNumberScheduled}")
	require.NoError(t, err, out)
	assert.Equal(t, "0", out, "what `oc get ds` shows the user")
	assert.Empty(t, k.livePods(nmstate.HandlerDaemonSet))

	out, err = k.kubectl("label", "node", "worker-1", "example.com/nmstate=yes")
	require.NoError(t, err, out)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	handlers := k.livePods(nmstate.HandlerDaemonSet)
	require.Len(t, handlers, 1)
	assert.Equal(t, "worker-1", handlers[0].Spec.NodeName)
}

// TestOperandsRolloutHung: a Linux worker whose pods never become ready holds
// the handler's rollout at 6 of 7; Progressing stays True/RollingOut and,
// once the rollout has lasted nmstate.RolloutHungAfter, Degraded turns
// True/RolloutHung while Available stays True. The host's clock is moved
// 16 minutes ahead instead of waiting. RecheckInterval is one second here
// (an hour elsewhere) because the hung check needs a reconcile after the
// threshold and a stuck rollout sends no event: only the recheck brings one.
// Removing the broken node ends the rollout and clears Degraded.
func TestOperandsRolloutHung(t *testing.T) {
	stuck := devcluster.LinuxWorker("worker-stuck")
	stuck.PodsNeverReady = true
	k := startCluster(t, clusterOption{nodes: append(devcluster.BareMetalNodes(), stuck)})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	var offset atomic.Int64
	var reconciles atomic.Int64
	k.startHost(func(o *controller.Options) {
		o.Now = func() time.Time {
			reconciles.Add(1)
			return time.Now().Add(time.Duration(offset.Load()))
		}
		o.RecheckInterval = time.Second
	})

	// The observable event: the real DaemonSet controller has settled at 6
	// of 7 ready, and the host reports it.
	var ds appsv1.DaemonSet
	require.True(t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Status.ObservedGeneration == ds.Generation &&
			ds.Status.DesiredNumberScheduled == 7 && ds.Status.NumberReady == 6
	}), "the rollout stops at 6 of 7 ready: %+v", ds.Status)
	var progressing operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		progressing = k.conditions()[nmstate.ConditionProgressing]
		return progressing.Status == operv1.ConditionTrue && progressing.Reason == nmstate.ReasonRollingOut &&
			strings.Contains(progressing.Message, "handler ready on 6 of 7 nodes")
	}), "Progressing never reported the stuck rollout: %+v", progressing)
	stuckPods := k.livePods(nmstate.HandlerDaemonSet)
	require.Len(t, stuckPods, 7)
	for _, p := range stuckPods {
		assert.Equal(t, p.Spec.NodeName != "worker-stuck", isPodReady(p), "only the pod on worker-stuck is not ready: %s on %s", p.Name, p.Spec.NodeName)
	}

	// Several rechecks after that, with the clock still true, nothing is hung.
	seen := reconciles.Load()
	require.True(t, waitUntil(func() bool { return reconciles.Load() >= seen+3 }), "the host rechecked %d times, not 3", reconciles.Load()-seen)
	conds := k.conditions()
	assert.Equal(t, operv1.ConditionFalse, conds[nmstate.ConditionDegraded].Status, "not Degraded before the threshold: %+v", conds[nmstate.ConditionDegraded])
	assert.Equal(t, nmstate.ReasonRollingOut, conds[nmstate.ConditionProgressing].Reason)
	assert.Equal(t, progressing.LastTransitionTime, conds[nmstate.ConditionProgressing].LastTransitionTime, "rechecks do not restart the rollout's clock")
	assert.Equal(t, operv1.ConditionTrue, conds[nmstate.ConditionAvailable].Status, "six handlers and the webhook serve")

	offset.Store(int64(nmstate.RolloutHungAfter + time.Minute))
	degraded := k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonRolloutHung)
	assert.Contains(t, degraded.Message, "has not finished in over 15m0s, since "+progressing.LastTransitionTime.UTC().Format(time.RFC3339))
	assert.Contains(t, degraded.Message, "handler ready on 6 of 7 nodes")
	// Another minute passes, and a few rechecks: the message says when the
	// rollout started, not how long ago, so it is not written again.
	offset.Store(int64(nmstate.RolloutHungAfter + 2*time.Minute))
	seen = reconciles.Load()
	require.True(t, waitUntil(func() bool { return reconciles.Load() >= seen+3 }), "the host rechecked %d times, not 3", reconciles.Load()-seen)
	again := k.conditions()[nmstate.ConditionDegraded]
	assert.Equal(t, degraded.Message, again.Message, "the message was rewritten as time passed")
	assert.Equal(t, degraded.LastTransitionTime, again.LastTransitionTime)
	conds = k.conditions()
	assert.Equal(t, operv1.ConditionTrue, conds[nmstate.ConditionProgressing].Status)
	assert.Equal(t, nmstate.ReasonRollingOut, conds[nmstate.ConditionProgressing].Reason)
	assert.Equal(t, operv1.ConditionTrue, conds[nmstate.ConditionAvailable].Status, "a hung rollout is not an outage")

	// The admin removes the broken node and its stuck pod (the pod garbage
	// collector would too, but only after a 40s quarantine); the DaemonSet
	// controller then wants six handlers, all ready, and the rollout is done.
	out, err := k.kubectl("delete", "node", "worker-stuck")
	require.NoError(t, err, out)
	for _, p := range stuckPods {
		if p.Spec.NodeName == "worker-stuck" {
			out, err := k.kubectl("-n", nmstate.Namespace, "delete", "pod", p.Name, "--force", "--grace-period=0")
			require.NoError(t, err, out)
		}
	}
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}

// TestOperandsImageBump: a host with a new handler image (a CNO upgrade)
// rolls the DaemonSet. A watch on the operands' pods, replayed event by
// event, shows at most one of the six Linux nodes without a ready handler at
// any moment (maxUnavailable 10% of 6, which the DaemonSet controller rounds
// up to 1). The webhook uses the same image and rolls too; its new pods are
// held until the host has reported that rollout, as a real node's image pull
// would hold them. A watch on the Network shows Available True throughout
// and Progressing True/RollingOut during the rollout, which ends with every
// handler replaced by one on the new image.
func TestOperandsImageBump(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	_, stop := k.launchHost(k.cfg)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	oldHandlers := sets.New[types.UID]()
	for _, p := range k.livePods(nmstate.HandlerDaemonSet) {
		oldHandlers.Insert(p.UID)
	}

	history := k.recordEvents(networkList(), &corev1.PodList{}, client.InNamespace(nmstate.Namespace))
	// New webhook pods are held back until the host has reported the
	// webhook's rollout: on a real node they take seconds (the new image's
	// pull, the readiness probe), under kwok a few milliseconds, which the
	// host's status may or may not catch.
	releaseWebhook := k.holdPods(nmstate.WebhookDeployment)
	require.NoError(t, stop())
	const newImage = "quay.io/openshift/origin-kubernetes-nmstate-handler:e2e-bumped"
	k.launchHost(k.cfg, withImage(newImage))
	var dep appsv1.Deployment
	var progressing operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		if !k.exists(&dep, nmstate.Namespace, nmstate.WebhookDeployment) || dep.Generation < 2 ||
			dep.Status.ObservedGeneration != dep.Generation || dep.Status.Replicas == 2 {
			return false
		}
		progressing = k.conditions()[nmstate.ConditionProgressing]
		return strings.Contains(progressing.Message, fmt.Sprintf("webhook %d of 2 replicas available", dep.Status.AvailableReplicas))
	}), "the host never reported the webhook's rollout; Deployment status %+v, Progressing %+v", dep.Status, progressing)
	releaseWebhook()

	linux := []string{"master-0", "master-1", "master-2", "worker-0", "worker-1", "worker-2"}
	// replay folds the recorded pod events into the pods at each moment.
	type moment struct{ unavailable, webhooksReady, handlersNew int }
	replay := func(events []loggedEvent) []moment {
		pods := map[string]*corev1.Pod{}
		var out []moment
		var podEvents []loggedEvent
		for _, e := range events {
			if _, ok := e.obj.(*corev1.Pod); ok {
				podEvents = append(podEvents, e)
			}
		}
		for i, e := range podEvents {
			p := e.obj.(*corev1.Pod)
			if e.typ == watch.Deleted {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = p
			}
			if i+1 < len(podEvents) && podEvents[i+1].rv == e.rv {
				continue // the listed pods: one moment
			}
			readyOn := sets.New[string]()
			m := moment{}
			for _, p := range pods {
				if p.DeletionTimestamp != nil || !isPodReady(p) {
					continue
				}
				switch p.Labels["name"] {
				case nmstate.HandlerDaemonSet:
					readyOn.Insert(p.Spec.NodeName)
					if p.Spec.Containers[0].Image == newImage {
						m.handlersNew++
					}
				case nmstate.WebhookDeployment:
					m.webhooksReady++
				}
			}
			for _, n := range linux {
				if !readyOn.Has(n) {
					m.unavailable++
				}
			}
			out = append(out, m)
		}
		return out
	}
	var moments []moment
	require.True(t, waitUntil(func() bool {
		moments = replay(history.sorted())
		return len(moments) > 0 && moments[len(moments)-1].handlersNew == 6
	}), "the watch never saw six ready handlers on the new image; its last moments: %+v", moments[max(0, len(moments)-3):])
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	events := history.stop()

	maxUnavailable, minWebhooks := 0, 2
	for _, m := range replay(events) {
		maxUnavailable = max(maxUnavailable, m.unavailable)
		minWebhooks = min(minWebhooks, m.webhooksReady)
	}
	assert.Equal(t, 1, maxUnavailable, "at most one of six handlers (10%, rounded up) unavailable at any moment, and the rollout did replace them")
	// Not asserted: the webhook Deployment is Recreate on purpose (see
	// 007-webhook.yaml), and its failurePolicy Ignore keeps policies
	// admitted while no replica runs.
	t.Logf("ready webhook replicas at the worst moment of the rollout: %d", minWebhooks)

	var rollingOut bool
	var notAvailable []string
	for _, e := range events {
		u, ok := e.obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		conds := conditionsOf(t, u)
		if a := conds[nmstate.ConditionAvailable]; a.Status != operv1.ConditionTrue {
			notAvailable = append(notAvailable, fmt.Sprintf("resourceVersion %s: Available %s/%s; Progressing: %s",
				u.GetResourceVersion(), a.Status, a.Reason, conds[nmstate.ConditionProgressing].Message))
		}
		if p := conds[nmstate.ConditionProgressing]; p.Status == operv1.ConditionTrue && p.Reason == nmstate.ReasonRollingOut {
			rollingOut = true
		}
	}
	assert.Empty(t, notAvailable, "Available stays True through an upgrade's rollout: neither workload ever had all its pods gone at once")
	assert.True(t, rollingOut, "Progressing was True/RollingOut during the rollout")

	handlers := k.livePods(nmstate.HandlerDaemonSet)
	require.Len(t, handlers, 6)
	onNodes := sets.New[string]()
	for _, p := range handlers {
		onNodes.Insert(p.Spec.NodeName)
		assert.Equal(t, newImage, p.Spec.Containers[0].Image, "handler %s on %s", p.Name, p.Spec.NodeName)
		assert.False(t, oldHandlers.Has(p.UID), "handler %s on %s was replaced", p.Name, p.Spec.NodeName)
		assert.True(t, isPodReady(p))
	}
	assert.Equal(t, sets.New(linux...), onNodes)
	for _, p := range k.livePods(nmstate.WebhookDeployment) {
		assert.Equal(t, newImage, p.Spec.Containers[0].Image, "webhook %s", p.Name)
	}
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}

// TestOperandsDisableReEnable: upstream's binary runs as the webhook and as
// worker-0's handler from the rendered pods and enacts a policy. Disabling
// with kubectl deletes the DaemonSet and Deployment and the garbage
// collector their pods; the policy (the same object), its enactment,
// worker-0's NodeNetworkState and the CRDs stay. Removing the field returns
// to the platform default (on for bare metal): new pods come up, upstream's
// binary started for them reports worker-0's state again, stamps and
// applies an edit of the very same policy.
func TestOperandsDisableReEnable(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitOperandsSettled(6, 2)
	o := k.startOperands()

	webhook := o.run(nmstate.WebhookDeployment, "")
	k.waitWebhookServing()
	handler := o.run(nmstate.HandlerDaemonSet, "worker-0")
	k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkState", "worker-0")
	k.kubectlThroughWebhook("apply", "-f", writeTemp(t, realPolicy))
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	policy := k.nncpObject("worker-0-dummy")
	stamp := policy.GetAnnotations()["nmstate.io/webhook-mutating-timestamp"]
	require.NotEmpty(t, stamp, "the real webhook stamped the policy")
	enactment := k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkConfigurationEnactment", "worker-0.worker-0-dummy")
	require.True(t, o.applied(`"name":"dummy0"`), "the handler applied the policy")
	requireRunning(t, handler)
	requireRunning(t, webhook)
	oldHandlerPod := o.pod(nmstate.HandlerDaemonSet, "worker-0").UID

	out, err := k.kubectl("patch", "network.operator", "cluster", "--type=merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	require.NoError(t, err, out)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitGone(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment)
	var live int
	require.True(t, waitUntil(func() bool {
		live = len(k.livePods(nmstate.HandlerDaemonSet)) + len(k.livePods(nmstate.WebhookDeployment))
		return live == 0
	}), "the garbage collector and kwok did not remove the operands' pods: %d still live", live)
	// The pods are gone: their containers stop, as their kubelets would stop them.
	require.NoError(t, handler.Stop())
	require.NoError(t, webhook.Stop())
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	available := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	assert.Contains(t, available.Message, "1 NodeNetworkConfigurationPolicy exists and is not enforced")
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	for _, crd := range nmstate.CRDNames() {
		assert.True(t, k.crdKept(crd), "CRD %s is kept", crd)
	}
	assert.Equal(t, policy.GetUID(), k.nncpObject("worker-0-dummy").GetUID(), "the policy is kept, the very same object")
	assert.Equal(t, enactment.GetUID(), k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkConfigurationEnactment", "worker-0.worker-0-dummy").GetUID(),
		"its enactment is kept")
	// Read after the handler stopped: any later write is the new handler's.
	nnsBefore := k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkState", "worker-0").GetResourceVersion()

	out, err = k.kubectl("patch", "network.operator", "cluster", "--type=json", "-p", `[{"op":"remove","path":"/spec/kubernetesNMState"}]`)
	require.NoError(t, err, out)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitOperandsSettled(6, 2)
	newHandlerPod := o.pod(nmstate.HandlerDaemonSet, "worker-0")
	assert.NotEqual(t, oldHandlerPod, newHandlerPod.UID, "a new handler pod on worker-0")
	webhook = o.run(nmstate.WebhookDeployment, "")
	k.waitWebhookServing()
	handler = o.run(nmstate.HandlerDaemonSet, "worker-0")
	require.True(t, waitUntil(func() bool {
		return k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkState", "worker-0").GetResourceVersion() != nnsBefore
	}), "the new handler never reported worker-0's NodeNetworkState: still resourceVersion %s; its log:\n%s", nnsBefore, handler.Log())
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")

	// The kept policy's edit is stamped by the new webhook and applied by
	// the new handler.
	k.kubectlThroughWebhook("patch", "nncp", "worker-0-dummy", "--type=merge", "-p",
		`{"spec":{"desiredState":{"interfaces":[{"name":"dummy0","type":"dummy","state":"up"},{"name":"dummy1","type":"dummy","state":"up"}]}}}`)
	require.True(t, waitUntil(func() bool { return o.applied(`"name":"dummy1"`) }), "the new handler never applied the kept policy's edit; applied:\n%s", o.appliedLog())
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	policy2 := k.nncpObject("worker-0-dummy")
	assert.Equal(t, policy.GetUID(), policy2.GetUID())
	assert.NotEqual(t, stamp, policy2.GetAnnotations()["nmstate.io/webhook-mutating-timestamp"], "the new webhook stamped the edit")
	assert.Equal(t, enactment.GetUID(), k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkConfigurationEnactment", "worker-0.worker-0-dummy").GetUID())
	requireRunning(t, handler)
	requireRunning(t, webhook)
}

// --- helpers ---

// waitOperandsSettled waits until the real controllers report, for the
// current generations, the handler ready on handlers nodes and the webhook
// Deployment's webhooks replicas updated and available.
func (k *cluster) waitOperandsSettled(handlers, webhooks int32) {
	k.t.Helper()
	var ds appsv1.DaemonSet
	var dep appsv1.Deployment
	require.True(k.t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && k.exists(&dep, nmstate.Namespace, nmstate.WebhookDeployment) &&
			ds.Status.ObservedGeneration == ds.Generation && ds.Status.DesiredNumberScheduled == handlers &&
			ds.Status.UpdatedNumberScheduled == handlers && ds.Status.NumberReady == handlers && ds.Status.NumberAvailable == handlers &&
			dep.Status.ObservedGeneration == dep.Generation && ptr.Deref(dep.Spec.Replicas, 1) == webhooks &&
			dep.Status.UpdatedReplicas == webhooks && dep.Status.AvailableReplicas == webhooks && dep.Status.Replicas == webhooks
	}), "the operands never settled at %d handlers and %d webhooks; DaemonSet status %+v, Deployment status %+v", handlers, webhooks, ds.Status, dep.Status)
}

// livePods lists the workload's pods that are not being deleted.
func (k *cluster) livePods(workload string) []*corev1.Pod {
	k.t.Helper()
	pods := &corev1.PodList{}
	require.NoError(k.t, k.c.List(k.ctx(), pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"name": workload}))
	var out []*corev1.Pod
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp == nil {
			out = append(out, &pods.Items[i])
		}
	}
	return out
}

func isPodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func networkList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(controller.NetworkGVK.GroupVersion().WithKind(controller.NetworkGVK.Kind + "List"))
	return l
}

// conditionsOf reads the operator conditions of a Network object.
func conditionsOf(t *testing.T, network *unstructured.Unstructured) map[string]operv1.OperatorCondition {
	t.Helper()
	raw, _, _ := unstructured.NestedSlice(network.Object, "status", "conditions")
	out := map[string]operv1.OperatorCondition{}
	for _, item := range raw {
		m, ok := item.(map[string]any)
		require.True(t, ok)
		out[fmt.Sprint(m["type"])] = operv1.OperatorCondition{
			Type: fmt.Sprint(m["type"]), Status: operv1.ConditionStatus(fmt.Sprint(m["status"])),
			Reason: fmt.Sprint(m["reason"]), Message: fmt.Sprint(m["message"]),
		}
	}
	return out
}

// loggedEvent is one watch event and its object's resourceVersion.
type loggedEvent struct {
	rv  uint64
	typ watch.EventType
	obj client.Object
}

// eventLog records the watch events of some lists from the moment it starts.
type eventLog struct {
	t      *testing.T
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	events []loggedEvent
	errs   []string
}

// recordEvents lists and then watches each list (a list followed by list
// options applies them to it) until stop. The events of different kinds are
// ordered by resourceVersion: opaque to clients in general, but in a cluster
// with one etcd it is etcd's single revision counter, so the merged log is
// the order in which the writes happened.
func (k *cluster) recordEvents(args ...any) *eventLog {
	k.t.Helper()
	wc, err := client.NewWithWatch(k.cfg, client.Options{Scheme: k.c.Scheme()})
	require.NoError(k.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	l := &eventLog{t: k.t, cancel: cancel}
	k.t.Cleanup(func() { l.stop() })
	for i := 0; i < len(args); {
		list, ok := args[i].(client.ObjectList)
		require.True(k.t, ok, "argument %d is not a list: %T", i, args[i])
		i++
		var opts []client.ListOption
		for i < len(args) {
			opt, ok := args[i].(client.ListOption)
			if !ok {
				break
			}
			opts = append(opts, opt)
			i++
		}
		// List, then watch from the list's resourceVersion: the listed
		// objects are the log's first entries, all at that version, and
		// nothing between the two is missed.
		require.NoError(k.t, wc.List(ctx, list, opts...), "listing %T", list)
		items, err := meta.ExtractList(list)
		require.NoError(k.t, err)
		listRV, err := strconv.ParseUint(list.GetResourceVersion(), 10, 64)
		require.NoError(k.t, err, "resourceVersion of %T", list)
		for _, item := range items {
			l.events = append(l.events, loggedEvent{rv: listRV, typ: watch.Added, obj: item.(client.Object)})
		}
		watchOpts := append(append([]client.ListOption{}, opts...), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})
		w, err := wc.Watch(ctx, list, watchOpts...)
		require.NoError(k.t, err, "watching %T", list)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					l.mu.Lock()
					switch {
					case !ok:
						l.errs = append(l.errs, fmt.Sprintf("the watch of %T ended early", list))
					case ev.Type == watch.Error || ev.Type == watch.Bookmark:
						l.errs = append(l.errs, fmt.Sprintf("watch of %T: %s event %v", list, ev.Type, ev.Object))
					default:
						obj := ev.Object.(client.Object)
						rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
						if err != nil {
							l.errs = append(l.errs, fmt.Sprintf("resourceVersion %q: %v", obj.GetResourceVersion(), err))
						}
						l.events = append(l.events, loggedEvent{rv: rv, typ: ev.Type, obj: obj})
					}
					l.mu.Unlock()
					if !ok {
						return
					}
				}
			}
		}()
	}
	return l
}

// sorted is the log so far, in resourceVersion order.
func (l *eventLog) sorted() []loggedEvent {
	l.mu.Lock()
	out := append([]loggedEvent(nil), l.events...)
	l.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].rv < out[j].rv })
	return out
}

// stop ends the watches and returns the log; the test fails if a watch
// broke, since the log would have a gap. Later calls return the same log.
func (l *eventLog) stop() []loggedEvent {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	errs := l.errs
	l.errs = nil
	l.mu.Unlock()
	assert.Empty(l.t, errs, "the event log is complete")
	return l.sorted()
}

// holdPods makes the API server refuse new pods labelled name=workload, as
// an admission policy or a quota might, until the returned release runs. It
// returns once a server-side dry run of such a pod is refused.
func (k *cluster) holdPods(workload string) (release func()) {
	k.t.Helper()
	name := "e2e-hold-" + workload
	manifest := fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: %[1]s
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
  validations:
  - expression: "false"
    message: held by the test
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: %[1]s
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    objectSelector:
      matchLabels:
        name: %[2]s
`, name, workload)
	out, err := k.kubectlApply(manifest)
	require.NoError(k.t, err, out)
	probe := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe","namespace":"default","labels":{"name":%q}},"spec":{"containers":[{"name":"c","image":"x"}]}}`, workload)
	path := writeTemp(k.t, probe)
	require.True(k.t, waitUntil(func() bool {
		out, err = k.kubectl("create", "--dry-run=server", "-f", path)
		return err != nil && strings.Contains(out, "held by the test")
	}), "the hold never took effect: %v: %s", err, out)
	return func() {
		k.t.Helper()
		out, err := k.kubectl("delete", "validatingadmissionpolicybinding", name)
		require.NoError(k.t, err, out)
	}
}

// kubectlThroughWebhook runs kubectl for a request the real webhook admits.
// The webhook's configuration may get its CA bundle a moment before the
// process listens: only that failure ("failed calling webhook") is retried,
// as a user would retry it.
func (k *cluster) kubectlThroughWebhook(args ...string) {
	k.t.Helper()
	var out string
	var err error
	require.True(k.t, waitUntil(func() bool {
		out, err = k.kubectl(args...)
		if err != nil && !strings.Contains(out, "failed calling webhook") {
			require.NoError(k.t, err, "kubectl %v: %s", args, out)
		}
		return err == nil
	}), "kubectl %v: %v: %s", args, err, out)
}
