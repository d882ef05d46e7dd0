package e2e

// Waits on what the real workload controllers report.

import (
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
