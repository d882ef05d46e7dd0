package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// badPolicies are policies no handler could ever enact, each with the words
// the admission policy refuses it with.
var badPolicies = []struct{ manifest, refusal string }{
	{policyManifest(strings.Repeat("a", 70), ""), "invalid policy name"},
	{policyManifest("bad-selector", `"yes please!"`), "spec.nodeSelector values must be valid label values"},
}

func policyManifest(name, selectorValue string) string {
	selector := ""
	if selectorValue != "" {
		selector = "\n  nodeSelector:\n    role: " + selectorValue
	}
	return fmt.Sprintf(`apiVersion: nmstate.io/v1
kind: NodeNetworkConfigurationPolicy
metadata:
  name: %s
spec:%s
  desiredState:
    interfaces:
    - name: eth1
      type: ethernet
      state: up
`, name, selector)
}

// requireRefused applies each bad policy with kubectl, as a user would, and
// requires the API server to refuse it with the admission policy's words.
func (k *cluster) requireRefused(t *testing.T) {
	t.Helper()
	for _, bad := range badPolicies {
		out, err := k.kubectlApply(bad.manifest)
		require.Error(t, err, "kubectl accepted a bad policy: %s", out)
		assert.Contains(t, out, "nncp-validation-policy")
		assert.Contains(t, out, bad.refusal)
	}
}

// waitEnforced waits until the API server enforces a just created admission
// policy and binding: its admission plugin loads them from its informers,
// some time after the create returned. A server-side dry run goes through
// admission and stores nothing, so waiting costs no bad policy.
func (k *cluster) waitEnforced(t *testing.T) {
	t.Helper()
	var out string
	require.True(t, waitUntil(func() bool {
		var err error
		out, err = k.kubectl("apply", "--dry-run=server", "-f", writeTemp(t, badPolicies[0].manifest))
		return err != nil && strings.Contains(out, "nncp-validation-policy")
	}), "the restored admission policy was never enforced; the last dry run: %s", out)
}

// requireValidationKept requires the admission policy and its binding to be
// on the server and not being deleted.
func (k *cluster) requireValidationKept(t *testing.T) {
	t.Helper()
	for name, obj := range map[string]client.Object{
		nmstate.ValidationPolicy:        &admissionregv1.ValidatingAdmissionPolicy{},
		nmstate.ValidationPolicyBinding: &admissionregv1.ValidatingAdmissionPolicyBinding{},
	} {
		require.True(t, k.exists(obj, "", name), "%T %s was pruned", obj, name)
		assert.Nil(t, obj.GetDeletionTimestamp(), "%T %s is being deleted", obj, name)
	}
}

// TestValidationKeptWhileDisabled: the admission policy and its binding stay
// with the CRDs, so a policy that could never be enacted is refused while
// kubernetes-nmstate is off, whether the user disabled it or the standalone
// operator is in charge. Before, both went with the handler, and a policy
// accepted then could only be deleted once validation came back.
func TestValidationKeptWhileDisabled(t *testing.T) {
	k := startCluster(t, clusterOption{extraCRDs: []string{nmstatesCRD}})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	// The standalone operator is watched (clusterstate.OperatorSource).
	k.startHost()
	k.waitSnapshot(rendered(t, "", bareMetalHA))
	k.createPolicy("bond0")
	k.requireRefused(t)

	t.Run("disabled by the user", func(t *testing.T) {
		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
		// Progressing turns AsExpected only once the host saw the handler
		// and webhook gone, after the pass that pruned.
		k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
		k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
		require.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))
		k.requireValidationKept(t)
		k.requireRefused(t)
	})

	t.Run("managed by the standalone operator", func(t *testing.T) {
		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
		k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
		k.createAvailableOperator(t)
		k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
		k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
		k.requireValidationKept(t)
		k.requireRefused(t)
	})
	assert.Equal(t, []string{"bond0"}, nncpNames(t, k))
}

// createOperatorDeployment creates the standalone operator's Deployment
// (devcluster.OperatorDeployment) with replicas in namespace, created if
// missing. On a cluster without nodes nothing runs it: markAvailable
// writes the status its controller would.
func (k *cluster) createOperatorDeployment(t *testing.T, namespace string, replicas int32) *appsv1.Deployment {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := k.c.Create(k.ctx(), ns); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	dep := devcluster.OperatorDeployment(namespace, replicas)
	require.NoError(t, k.c.Create(k.ctx(), dep))
	return dep
}

// createAvailableOperator stands for the standalone operator in charge on
// a cluster without nodes: its Deployment, marked available, and its
// NMState CR nmstate (the cluster needs the CRD, nmstatesCRD).
func (k *cluster) createAvailableOperator(t *testing.T) {
	t.Helper()
	k.markAvailable(t, k.createOperatorDeployment(t, "e2e-nmstate-operator", 1))
	k.createNMState(t)
}

// createNMState creates the standalone operator's CR, nmstate, with
// kubectl, which finds the kind once its CRD is served even if that CRD was
// created a moment ago.
func (k *cluster) createNMState(t *testing.T) {
	t.Helper()
	var out string
	require.True(t, waitUntil(func() bool {
		var err error
		out, err = k.kubectlApply("apiVersion: nmstate.io/v1\nkind: NMState\nmetadata:\n  name: nmstate\n")
		return err == nil
	}), "creating NMState nmstate: %s", out)
}

// nmstatesCRD is the standalone operator's NMState CRD, for extraCRDs.
const nmstatesCRD = "testdata/crds/nmstate.io_nmstates.yaml"

// markAvailable writes the status the Deployment controller writes for one
// available replica, on a cluster where no controller runs.
func (k *cluster) markAvailable(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}
	require.NoError(t, k.c.Status().Update(k.ctx(), dep))
}

// TestDefaultOffKeepsPoliciesEnforced: a default that turns off under a
// running handler with policies keeps it running, saying so, until the user
// says Disabled; then the conditions count the policies no longer enforced.
func TestDefaultOffKeepsPoliciesEnforced(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.AWSPlatformType, ha, ha)
	k.createNetwork(map[string]any{"mode": "Enabled"})
	// The host does not watch policies: the recheck sees the last one go.
	k.startHost(func(o *controller.Options) { o.RecheckInterval = time.Second })
	aws := bareMetalHA
	aws.Platform = configv1.AWSPlatformType
	enabled := k.waitSnapshot(rendered(t, modeEnabled, aws))
	k.createPolicy("bond0")
	k.createPolicy("vlan100")

	// The user removes mode: Enabled on AWS, where the default is off.
	k.patchNetwork(`{"spec":{"kubernetesNMState":null}}`)
	// No node runs the handler's pods here, so Available is False
	// (Deploying) and carries the decision; with handlers ready it is True
	// with reason KeptForExistingPolicies (pkg/nmstate's TestConditions).
	c := k.waitAvailableContaining("keeps running because")
	assert.Contains(t, c.Message, "off by default on AWS")
	assert.Contains(t, c.Message, "keeps running because 2 NodeNetworkConfigurationPolicies would otherwise no longer be enforced")
	assert.Contains(t, c.Message, `"mode":"Disabled"`)
	assert.Empty(t, k.lost(enabled), "nothing was removed or recreated")
	assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)

	// An explicit Disabled removes it and says what is no longer enforced.
	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitAvailableMessage(operv1.ConditionFalse, nmstate.ReasonUserDisabled, "2 NodeNetworkConfigurationPolicies exist and are not enforced")

	// Omitting the mode again keeps it off: no handler runs that the
	// default could keep.
	k.patchNetwork(`{"spec":{"kubernetesNMState":null}}`)
	k.waitAvailableMessage(operv1.ConditionFalse, nmstate.ReasonPlatformNotDefault, "2 NodeNetworkConfigurationPolicies exist and are not enforced")
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))

	// Kept ends by itself once no policy is left to enforce.
	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.patchNetwork(`{"spec":{"kubernetesNMState":null}}`)
	k.waitAvailableContaining("keeps running because")
	for _, name := range []string{"bond0", "vlan100"} {
		require.NoError(t, k.c.Delete(k.ctx(), nncp(t, name)))
	}
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	c = k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonPlatformNotDefault)
	assert.NotContains(t, c.Message, "not enforced")
}

// waitAvailableContaining waits for a KubernetesNMStateAvailable message
// containing text, whatever its status.
func (k *cluster) waitAvailableContaining(text string) operv1.OperatorCondition {
	k.t.Helper()
	var c operv1.OperatorCondition
	require.True(k.t, waitUntil(func() bool {
		c = k.conditions()[nmstate.ConditionAvailable]
		return strings.Contains(c.Message, text)
	}), "Available never said %q: %+v", text, c)
	return c
}

// TestAccountsOutliveTheirPods: disabled while a handler pod cannot end yet
// (a finalizer of the test's holds it), the handler's ServiceAccount and
// RBAC stay, and Progressing says which pods hold them up; once the pod is
// gone, they go. Before, they were deleted in the same pass as the
// DaemonSet, under pods still shutting down, whose tokens the API server
// then refused.
func TestAccountsOutliveTheirPods(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitOperandsSettled(6, 2)
	access := k.waitSnapshot(accessOf(rendered(t, "", bareMetalHA)))
	pod := k.livePods(nmstate.HandlerDaemonSet)[0]
	out, err := k.kubectl("-n", nmstate.Namespace, "patch", "pod", pod.Name, "--type=merge", "-p", `{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`)
	require.NoError(t, err, out)

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitGone(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment)
	// The pass that deleted the workloads, and the ones after, left them all.
	require.Empty(t, k.lost(access), "accounts or RBAC pruned under a running pod")
	var progressing operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		progressing = k.conditions()[nmstate.ConditionProgressing]
		return progressing.Reason == nmstate.ReasonRemoving && strings.Contains(progressing.Message, "waiting for 1 pod of")
	}), "Progressing never said which pod holds up the removal; last: %+v", progressing)
	require.True(t, k.exists(&corev1.Pod{}, nmstate.Namespace, pod.Name), "the held pod is gone")
	require.Empty(t, k.lost(access), "accounts or RBAC pruned under a running pod")

	out, err = k.kubectl("-n", nmstate.Namespace, "patch", "pod", pod.Name, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	require.NoError(t, err, out)
	k.waitGone(&corev1.ServiceAccount{}, nmstate.Namespace, "nmstate-handler")
	k.waitGone(&rbacv1.ClusterRoleBinding{}, "", "nmstate-handler")
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}

// TestFinalizedHandlerThenDisabled: a finalizer someone else put on the
// handler DaemonSet holds it, and its 6 pods, after Disabled. The
// conditions say so: Available that the handler still runs on 6 nodes,
// Progressing which finalizer holds the DaemonSet, and, once that has
// lasted RolloutHungAfter (the host's clock is moved ahead, and it rechecks
// every second, since a held DaemonSet sends no event), Degraded
// RemovalHung with the command that lets it go. The handler's account and
// RBAC stay meanwhile. Once the finalizer is removed, everything goes and
// both conditions clear. Before, Available said that no handler runs,
// Degraded stayed False, and the account and RBAC were pruned under the 6
// running pods.
func TestFinalizedHandlerThenDisabled(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	offset := k.startHostWithClock()
	k.waitOperandsSettled(6, 2)
	access := k.waitSnapshot(accessOf(rendered(t, "", bareMetalHA)))
	out, err := k.kubectl("-n", nmstate.Namespace, "patch", "daemonset", nmstate.HandlerDaemonSet, "--type=merge", "-p", `{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`)
	require.NoError(t, err, out)

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	var progressing operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		progressing = k.conditions()[nmstate.ConditionProgressing]
		return progressing.Reason == nmstate.ReasonRemoving && strings.Contains(progressing.Message, `daemonset nmstate-handler is held by finalizers "`+holdFinalizer+`"`)
	}), "Progressing never named the finalizer that holds the handler; last: %+v", progressing)
	available := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	assert.Contains(t, available.Message, "the kubernetes-nmstate handler still runs on 6 nodes until its DaemonSet is removed")
	assert.NotContains(t, available.Message, "no kubernetes-nmstate handler runs")
	assert.Len(t, k.livePods(nmstate.HandlerDaemonSet), 6, "the held DaemonSet's pods run")
	assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status, "not Degraded before %s", nmstate.RolloutHungAfter)
	assert.Empty(t, k.lost(access), "accounts or RBAC pruned under the held handler's pods")

	offset.Store(int64(nmstate.RolloutHungAfter + time.Minute))
	degraded := k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonRemovalHung)
	assert.Contains(t, degraded.Message, `daemonset nmstate-handler is held by finalizers "`+holdFinalizer+`"`)
	assert.Contains(t, degraded.Message, `oc -n openshift-nmstate patch daemonset nmstate-handler --type=merge -p '{"metadata":{"finalizers":null}}'`)

	out, err = k.kubectl("-n", nmstate.Namespace, "patch", "daemonset", nmstate.HandlerDaemonSet, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	require.NoError(t, err, out)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitGone(&corev1.ServiceAccount{}, nmstate.Namespace, "nmstate-handler")
	k.waitGone(&rbacv1.ClusterRoleBinding{}, "", "nmstate-handler")
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}
