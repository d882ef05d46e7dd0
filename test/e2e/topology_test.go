package e2e

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Hosted control planes: off by default; Enabled renders everything into
// the hosted cluster with the webhook on its workers.
func TestHostedControlPlane(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.KubevirtPlatformType, configv1.ExternalTopologyMode, ha)
	k.createNetwork(nil)
	k.startHost()
	c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonPlatformNotDefault)
	assert.Contains(t, c.Message, "hosted (External) control plane")
	assert.False(t, k.exists(&corev1.Namespace{}, "", nmstate.Namespace))

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	webhook := &appsv1.Deployment{}
	k.waitExists(webhook, nmstate.Namespace, nmstate.WebhookDeployment)
	assert.Empty(t, webhook.Spec.Template.Spec.Tolerations, "no control-plane nodes to tolerate in a hosted cluster")
	assert.Nil(t, webhook.Spec.Template.Spec.Affinity)
	assert.EqualValues(t, 2, *webhook.Spec.Replicas)
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	// Degraded is False both before and after: wait for the decision itself.
	k.waitAvailableContaining("handler and the webhook both run on this cluster's worker nodes")
	assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
}

// The staged default: with the gate off, BareMetal stays off until the user
// opts in.
func TestDefaultGateOff(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost(func(o *controller.Options) { o.DefaultOnGate = false })
	c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonDefaultGateOff)
	assert.Contains(t, c.Message, "KubernetesNMStateByDefault")
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonDeploying)
}

// On a Default feature-set cluster the field is not in the CRD yet (its
// KubernetesNMState gate is off there), so the API server prunes it: an
// `oc patch` to Enabled stores nothing, and with the staged default off too
// nothing runs.
func TestDefaultFeatureSetHasNoField(t *testing.T) {
	k := startCluster(t, clusterOption{networkCRD: defaultNetworkCRD})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	out, err := k.kubectl("patch", "network.operator", "cluster", "--type", "merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	require.NoError(t, err, out)
	assert.Contains(t, out, `unknown field "spec.kubernetesNMState"`, "kubectl warns that the field was dropped")
	_, found, _ := unstructured.NestedFieldNoCopy(k.network().Object, "spec", "kubernetesNMState")
	assert.False(t, found, "the Default CRD prunes spec.kubernetesNMState")

	k.startHost(func(o *controller.Options) { o.DefaultOnGate = false })
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonDefaultGateOff)
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))
}
