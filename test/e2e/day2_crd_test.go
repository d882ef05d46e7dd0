package e2e

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestCRDDeletionProtected (issue 20, item 5): deleting an nmstate.io CRD,
// which deletes every policy with it, is refused by the rendered admission
// policy, by name or by label, enabled or disabled, with a message that says
// how to do it on purpose; after the annotation it names, the delete goes
// through. Before, `kubectl delete crd` took three policies with it and the
// CRD came back empty.
func TestCRDDeletionProtected(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitSnapshot(rendered(t, "", bareMetalHA))
	for _, name := range []string{"bond0", "vlan100", "br-ex2"} {
		k.createPolicy(name)
	}
	policies := nncpNames(t, k)
	require.Len(t, policies, 3)

	refused := func(t *testing.T, args ...string) {
		t.Helper()
		// The binding takes a moment to be enforced after its creation.
		var out string
		require.True(t, waitUntil(func() bool {
			var err error
			out, err = k.kubectl(append([]string{"--dry-run=server"}, args...)...)
			return err != nil
		}), "the delete was admitted: %s", out)
		out, err := k.kubectl(args...)
		require.Error(t, err, "the delete was admitted: %s", out)
		assert.Contains(t, out, nmstate.CRDDeletionProtection)
		assert.Contains(t, out, "deletes every object of its kind with no undo")
		assert.Contains(t, out, "oc annotate crd nodenetworkconfigurationpolicies.nmstate.io "+nmstate.AllowDeletionAnnotation+"=true")
		for _, name := range nmstate.CRDNames() {
			assert.True(t, k.crdKept(name), "%s is being deleted", name)
		}
		assert.ElementsMatch(t, policies, nncpNames(t, k), "policies lost")
	}
	t.Run("enabled, by name", func(t *testing.T) {
		refused(t, "delete", "crd", "nodenetworkconfigurationpolicies.nmstate.io")
	})
	t.Run("enabled, by label", func(t *testing.T) {
		refused(t, "delete", "crd", "-l", nmstate.OwnerLabel)
	})
	t.Run("disabled", func(t *testing.T) {
		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
		k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
		for _, name := range []string{nmstate.CRDDeletionProtection} {
			require.True(t, k.exists(&admissionregv1.ValidatingAdmissionPolicy{}, "", name))
			require.True(t, k.exists(&admissionregv1.ValidatingAdmissionPolicyBinding{}, "", name))
		}
		refused(t, "delete", "crd", "nodenetworkconfigurationpolicies.nmstate.io")
	})
	t.Run("on purpose: the annotation first", func(t *testing.T) {
		crd := "nodenetworkconfigurationpolicies.nmstate.io"
		out, err := k.kubectl("annotate", "crd", crd, nmstate.AllowDeletionAnnotation+"=true")
		require.NoError(t, err, out)
		out, err = k.kubectl("delete", "crd", crd, "--wait=false")
		require.NoError(t, err, out)
		last := &apiextensionsv1.CustomResourceDefinition{}
		require.True(t, waitUntil(func() bool { return !k.exists(last, "", crd) || last.DeletionTimestamp != nil }),
			"the annotated CRD was not deleted; last seen with finalizers %v and annotations %v", last.Finalizers, last.Annotations)
		// The others are still protected.
		out, err = k.kubectl("delete", "crd", nmstate.CRDNames()[1])
		require.Error(t, err, out)
		assert.True(t, k.crdKept(nmstate.CRDNames()[1]))
	})
}
