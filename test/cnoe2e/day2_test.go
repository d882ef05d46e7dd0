//go:build cnoe2e

package cnoe2e

import (
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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestDay2Kept (issue 20, items 1, 2, 5 and 6, on real CNO): what an SRE
// deleted or edited on a running cluster, with CNO's own reconciles (each
// step makes one with touchCNO rather than wait for CNO's resync):
//   - kept for policies (BareMetal turned AWS, mode omitted, a policy), the
//     handler DaemonSet deleted: CNO recreates it, still kept;
//   - its Namespace held terminating until Available says Failed: once it is
//     gone, CNO brings the handler back, still kept, and pruned none of its
//     RBAC meanwhile;
//   - the owner label removed from the handler DaemonSet: CNO puts it back
//     and prunes nothing of the running handler;
//   - deleting a policies CRD is refused by the rendered admission policy;
//   - mode Disabled, the admission policy deleted: CNO restores it.
func TestDay2Kept(t *testing.T) {
	e, _, policy := deployedOnBareMetal(t, options{})

	infra := &configv1.Infrastructure{}
	require.True(t, e.exists(infra, "", "cluster"))
	infra.Status.Platform = configv1.AWSPlatformType
	infra.Status.PlatformStatus = &configv1.PlatformStatus{Type: configv1.AWSPlatformType, AWS: &configv1.AWSPlatformStatus{Region: "us-east-1"}}
	require.NoError(t, e.c.Status().Update(e.ctx(), infra))
	e.touchCNO()
	e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)

	t.Run("the kept handler's DaemonSet deleted", func(t *testing.T) {
		old := &appsv1.DaemonSet{}
		require.True(t, e.exists(old, nmstate.Namespace, nmstate.HandlerDaemonSet))
		require.NoError(t, e.c.Delete(e.ctx(), old, client.PropagationPolicy("Background")))
		e.touchCNO()
		ds := &appsv1.DaemonSet{}
		require.True(t, waitFor(4*time.Minute, func() bool {
			return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.UID != old.UID
		}), "CNO did not recreate the kept handler; %s", e.describeConditions())
		e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)
		assert.True(t, e.exists(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment), "the webhook was pruned")
	})

	t.Run("the kept handler's Namespace terminating past the grace", func(t *testing.T) {
		binding := &rbacv1.ClusterRoleBinding{}
		require.True(t, e.exists(binding, "", "nmstate-handler"))
		ns := &corev1.Namespace{}
		require.True(t, e.exists(ns, "", nmstate.Namespace))
		// A finalizer of the test's keeps the emptied Namespace terminating,
		// so that CNO's creates in it fail past its 2-minute grace and
		// Available says Failed rather than why the handler runs.
		require.NoError(t, e.c.Patch(e.ctx(), ns, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`))))
		require.NoError(t, e.c.Delete(e.ctx(), ns))
		e.touchCNO()
		e.waitCondition(6*time.Minute, nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonFailed)
		require.NoError(t, e.c.Patch(e.ctx(), ns, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
		e.touchCNO()
		ds := &appsv1.DaemonSet{}
		require.True(t, waitFor(5*time.Minute, func() bool { return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) }),
			"CNO did not bring the kept handler back once its Namespace was gone; %s", e.describeConditions())
		e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonKeptForExistingPolicies)
		now := &rbacv1.ClusterRoleBinding{}
		require.True(t, e.exists(now, "", "nmstate-handler"), "the kept handler's ClusterRoleBinding was pruned")
		assert.Equal(t, binding.UID, now.UID, "the kept handler's ClusterRoleBinding was pruned and recreated")
	})

	t.Run("the handler's owner label removed", func(t *testing.T) {
		account := &corev1.ServiceAccount{}
		require.True(t, e.exists(account, nmstate.Namespace, "nmstate-handler"))
		ds := &appsv1.DaemonSet{}
		require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
		require.NoError(t, e.c.Patch(e.ctx(), ds, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/metadata/labels/networkoperator.openshift.io~1kubernetes-nmstate"}]`))))
		e.touchCNO()
		require.True(t, waitFor(4*time.Minute, func() bool {
			return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Labels[nmstate.OwnerLabel] == nmstate.PluginVersion
		}), "CNO did not put the owner label back; %s", e.describeConditions())
		// Another status pass for a wrong prune to show.
		e.reconciled()
		now := &corev1.ServiceAccount{}
		require.True(t, e.exists(now, nmstate.Namespace, "nmstate-handler"), "the running handler's account was pruned")
		assert.Equal(t, account.UID, now.UID, "the running handler's account was recreated")
		assert.Equal(t, nmstate.ReasonKeptForExistingPolicies, e.operatorConditions()[nmstate.ConditionAvailable].Reason)
	})

	t.Run("deleting the policies CRD", func(t *testing.T) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.True(t, e.exists(crd, "", nmstate.PoliciesCRD))
		err := e.c.Delete(e.ctx(), crd)
		require.Error(t, err, "the delete was admitted")
		assert.True(t, apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), nmstate.AllowDeletionAnnotation+"=true")
		require.True(t, e.exists(crd, "", nmstate.PoliciesCRD))
		assert.Nil(t, crd.DeletionTimestamp)
	})

	t.Run("disabled, the admission policy deleted", func(t *testing.T) {
		e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
		require.True(t, waitFor(4*time.Minute, func() bool { return !e.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet) }),
			"CNO did not remove the handler; %s", e.describeConditions())
		vap := &admissionregv1.ValidatingAdmissionPolicy{}
		require.True(t, e.exists(vap, "", nmstate.ValidationPolicy))
		old := vap.UID
		require.NoError(t, e.c.Delete(e.ctx(), vap))
		e.touchCNO()
		require.True(t, waitFor(4*time.Minute, func() bool {
			return e.exists(vap, "", nmstate.ValidationPolicy) && vap.UID != old
		}), "CNO did not restore the admission policy while disabled; %s", e.describeConditions())
		assert.False(t, e.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet), "restoring ran the handler")
	})

	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(policyGVK)
	require.True(t, e.exists(p, "", "keep-me"), "the user's policy is kept")
	assert.Equal(t, policy, p.GetUID(), "the user's policy is the same object")
}
