package e2e

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// What an SRE deleted or edited on a running cluster (issue 20, items 1, 2
// and 6): what the plugin keeps stays kept.

// setPlatform changes the Infrastructure's platform, as no installer does
// but a test of a default that turns off needs.
func (k *cluster) setPlatform(p configv1.PlatformType) {
	k.t.Helper()
	infra := &configv1.Infrastructure{}
	require.NoError(k.t, k.c.Get(k.ctx(), client.ObjectKey{Name: "cluster"}, infra))
	infra.Status.Platform = p
	infra.Status.PlatformStatus = &configv1.PlatformStatus{Type: p}
	if p == configv1.AWSPlatformType {
		infra.Status.PlatformStatus.AWS = &configv1.AWSPlatformStatus{Region: "us-east-1"}
	}
	require.NoError(k.t, k.c.Status().Update(k.ctx(), infra))
}

// conditionReasons are the reasons of every condition typ the log saw
// written, in order, repeats dropped.
func conditionReasons(t *testing.T, events []loggedEvent, typ string) []string {
	var out []string
	for _, e := range events {
		network, ok := e.obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		reason := conditionsOf(t, network)[typ].Reason
		if len(out) == 0 || out[len(out)-1] != reason {
			out = append(out, reason)
		}
	}
	return out
}

// TestKeptForPoliciesSurvivesDeletion: with mode omitted, a platform that
// is no longer on by default and a policy, the handler is kept for the
// policy. Deleting its DaemonSet, then its whole Namespace, must not turn
// kubernetes-nmstate off: both come back, and no Available written meanwhile
// says PlatformNotDefault. Before, the keep rule asked for the DaemonSet,
// so its deletion pruned the webhook and the rest, and nothing came back.
func TestKeptForPoliciesSurvivesDeletion(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.createPolicy("bond0")
	policy := k.nncpObject("bond0").GetUID()
	k.setPlatform(configv1.AWSPlatformType)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)
	history := k.recordEvents(networkList())

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"the handler DaemonSet", []string{"-n", nmstate.Namespace, "delete", "daemonset", nmstate.HandlerDaemonSet}},
		{"the namespace", []string{"delete", "namespace", nmstate.Namespace, "--wait=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := &appsv1.DaemonSet{}
			require.True(t, k.exists(before, nmstate.Namespace, nmstate.HandlerDaemonSet))
			out, err := k.kubectl(tc.args...)
			require.NoError(t, err, out)
			ds := &appsv1.DaemonSet{}
			require.True(t, waitUntil(func() bool {
				return k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.UID != before.UID && ds.DeletionTimestamp == nil
			}), "the handler DaemonSet never came back; last seen: UID %s (deleted %s), deletion %v", ds.UID, before.UID, ds.DeletionTimestamp)
			k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)
			require.True(t, k.exists(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment), "the webhook was pruned")
		})
	}
	reasons := conditionReasons(t, history.stop(), nmstate.ConditionAvailable)
	t.Logf("Available meanwhile: %v", reasons)
	assert.NotContains(t, reasons, nmstate.ReasonPlatformNotDefault, "kubernetes-nmstate was turned off")
	assert.Equal(t, policy, k.nncpObject("bond0").GetUID(), "the policy is the same object")
}

// TestKeptForPoliciesSurvivesFailures: a handler kept for a policy, its
// Namespace stuck terminating (a finalizer of the test's) past the failure
// grace, so that the conditions say Failed, not why the handler runs. The
// decision to keep it must outlive that: once the Namespace is gone, the
// handler comes back, still kept for the policy, and nothing cluster-scoped
// of it (its RBAC, the webhook configuration) was pruned meanwhile. Before,
// the memory of "kept" was the Available condition's reason, which a failure
// overwrites: the next reconcile turned kubernetes-nmstate off on AWS,
// pruned the handler's RBAC and never brought it back.
func TestKeptForPoliciesSurvivesFailures(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	// No grace: the first failure is Degraded, and Available says Failed.
	k.startHost(func(o *controller.Options) { o.FailureGrace = time.Nanosecond })
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.createPolicy("bond0")
	k.setPlatform(configv1.AWSPlatformType)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)
	before := k.waitSnapshot(rendered(t, "", bareMetalHA))

	out, err := k.kubectl("patch", "namespace", nmstate.Namespace, "--type=merge", "-p", `{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`)
	require.NoError(t, err, out)
	out, err = k.kubectl("delete", "namespace", nmstate.Namespace, "--wait=false")
	require.NoError(t, err, out)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	failed := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonFailed)
	assert.Contains(t, k.conditions()[nmstate.ConditionDegraded].Message, "being terminated", "Available: %+v", failed)
	history := k.recordEvents(networkList())
	out, err = k.kubectl("patch", "namespace", nmstate.Namespace, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	require.NoError(t, err, out)

	ds := &appsv1.DaemonSet{}
	require.True(t, waitUntil(func() bool { return k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) }),
		"the kept handler never came back after its Namespace was gone; conditions: %+v", k.conditions())
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)
	for _, key := range k.lost(before) {
		inNamespace := strings.Contains(key, " "+nmstate.Namespace+"/") || strings.HasPrefix(key, "Namespace "+nmstate.Namespace+" ")
		assert.True(t, inNamespace, "a cluster-scoped object was lost: %s", key)
	}
	reasons := conditionReasons(t, history.stop(), nmstate.ConditionAvailable)
	t.Logf("Available after the failures: %v", reasons)
	assert.NotContains(t, reasons, nmstate.ReasonPlatformNotDefault, "kubernetes-nmstate was turned off")
}

// TestOwnHandlerWithoutItsLabel: the owner label removed from the plugin's
// own handler DaemonSet does not make it another manager's. Before, the
// plugin stepped aside for itself and pruned the running handler's account,
// RBAC, webhook and metrics manager. Now the label is back with the next
// apply, nothing is deleted or recreated, and Available never changes.
func TestOwnHandlerWithoutItsLabel(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	before := k.waitSnapshot(rendered(t, "", bareMetalHA))
	history := k.recordEvents(networkList())

	out, err := k.kubectl("-n", nmstate.Namespace, "label", "daemonset", nmstate.HandlerDaemonSet, nmstate.OwnerLabel+"-")
	require.NoError(t, err, out)
	ds := &appsv1.DaemonSet{}
	require.True(t, waitUntil(func() bool {
		return k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Labels[nmstate.OwnerLabel] == nmstate.PluginVersion
	}), "the owner label was never put back: %v", ds.Labels)
	// A few more reconciles' worth of time for a wrong decision to show.
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	assert.Empty(t, k.lost(before), "objects deleted or recreated")
	assert.Equal(t, []string{nmstate.ReasonPlatformDefault}, conditionReasons(t, history.stop(), nmstate.ConditionAvailable))
}

// TestKeptRestoredWhileDisabled: with mode Disabled, the admission policy,
// its binding and the reader role, deleted, come back, as they do while
// enabled, and a policy no handler could enact is still refused. Before,
// nothing rendered while disabled, so kept meant "not deleted by the
// plugin" and a 70-character policy name was admitted.
func TestKeptRestoredWhileDisabled(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(map[string]any{"mode": "Disabled"})
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	// Disabled from the start: nothing was ever installed, so nothing is.
	require.False(t, k.crdKept(nmstate.PoliciesCRD), "a cluster that never ran kubernetes-nmstate got its CRDs")

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonDeploying)
	k.createPolicy("bond0")
	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)

	for _, tc := range []struct {
		obj  client.Object
		name string
	}{
		{&admissionregv1.ValidatingAdmissionPolicy{}, nmstate.ValidationPolicy},
		{&admissionregv1.ValidatingAdmissionPolicyBinding{}, nmstate.ValidationPolicyBinding},
		{&rbacv1.ClusterRole{}, nmstate.ClusterReaderRole},
	} {
		require.True(t, k.exists(tc.obj, "", tc.name), "%T %s is not kept", tc.obj, tc.name)
		uid := tc.obj.GetUID()
		require.NoError(t, k.c.Delete(k.ctx(), tc.obj))
		require.True(t, waitUntil(func() bool {
			return k.exists(tc.obj, "", tc.name) && tc.obj.GetUID() != uid && tc.obj.GetDeletionTimestamp() == nil
		}), "%T %s was not restored while disabled", tc.obj, tc.name)
	}
	k.waitEnforced(t)
	k.requireRefused(t)
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet), "restoring the kept objects ran the handler")
	assert.Equal(t, []string{"bond0"}, nncpNames(t, k))
}
