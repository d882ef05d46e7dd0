//go:build cnoe2e

package cnoe2e

import (
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestRecreatedAccount (scenario o): the install rolls nothing (the handler
// DaemonSet stays at generation 1). The handler's ServiceAccount deleted by
// hand: CNO sees the deletion and recreates it at once, and its next
// reconcile stamps the new UID on the handler's pod template
// (nmstate.AccountUIDAnnotation), so every handler pod is replaced by one
// whose token names the account as it now is. test/e2e
// TestRecreatedAccountRollsPods proves the tokens with upstream's handler.
// Before, CNO recreated the account only at its resync, and no pod rolled.
func TestRecreatedAccount(t *testing.T) {
	e, _, _ := deployedOnBareMetal(t, options{})
	ds := &appsv1.DaemonSet{}
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.EqualValues(t, 1, ds.Generation, "the install rolled the handler")

	account := &corev1.ServiceAccount{}
	require.True(t, e.exists(account, nmstate.Namespace, nmstate.HandlerDaemonSet))
	began := time.Now()
	require.NoError(t, e.c.Delete(e.ctx(), account))
	recreated := &corev1.ServiceAccount{}
	require.True(t, waitFor(time.Minute, func() bool {
		return e.exists(recreated, nmstate.Namespace, nmstate.HandlerDaemonSet) && recreated.UID != account.UID
	}), "CNO did not recreate the handler's ServiceAccount within a minute; %s", e.describeConditions())
	figure(t, "handler ServiceAccount deleted to recreated: %s", time.Since(began).Round(100*time.Millisecond))
	require.True(t, waitFor(time.Minute, func() bool {
		return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) &&
			ds.Spec.Template.Annotations[nmstate.AccountUIDAnnotation] == string(recreated.UID)
	}), "the handler's pod template was never stamped with the recreated account's UID: %v", ds.Spec.Template.Annotations)
	require.True(t, waitFor(3*time.Minute, func() bool {
		return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && dsAvailable(ds)
	}), "the handler never rolled: %+v", ds.Status)
	figure(t, "handler ServiceAccount deleted to every handler pod replaced and available: %s", time.Since(began).Round(100*time.Millisecond))
	pods := &corev1.PodList{}
	require.NoError(t, e.c.List(e.ctx(), pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"component": "kubernetes-nmstate-handler"}))
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			assert.False(t, p.CreationTimestamp.Before(&recreated.CreationTimestamp), "pod %s predates the recreated account", p.Name)
		}
	}
	e.waitCondition(time.Minute, nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}
