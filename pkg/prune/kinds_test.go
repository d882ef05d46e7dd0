package prune

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Every kind the bindata renders must be watched and either prunable or
// kept: a kind in neither would be left behind forever once no longer rendered.
func TestEveryRenderedKindIsPrunableOrKept(t *testing.T) {
	scheme := newScheme(t)
	known := map[schema.GroupKind]string{}
	for _, obj := range prunable {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		require.NoError(t, err)
		known[gvk.GroupKind()] = "prunable"
	}
	for _, obj := range kept {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		require.NoError(t, err)
		known[gvk.GroupKind()] = "kept"
	}
	assert.Equal(t, "kept", known[schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}])

	for _, topology := range []configv1.TopologyMode{configv1.HighlyAvailableTopologyMode, configv1.SingleReplicaTopologyMode, configv1.ExternalTopologyMode} {
		infra := configv1.HighlyAvailableTopologyMode
		if topology == configv1.SingleReplicaTopologyMode {
			infra = topology
		}
		enabled := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"kubernetesNMState": map[string]any{"mode": "Enabled"}}}}
		res := nmstate.Render(nmstate.Input{Network: enabled, Images: nmstate.Images{Handler: "img", ReleaseVersion: "1"}, ManifestDir: "../../bindata",
			Infrastructure: nmstate.Infrastructure{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: topology, InfrastructureTopology: infra}})
		require.NoError(t, res.Err)
		require.NotEmpty(t, res.Objects)
		for _, obj := range res.Objects {
			gk := obj.GroupVersionKind().GroupKind()
			assert.Contains(t, known, gk, "%s %s is neither prunable nor kept", gk, obj.GetName())
			if obj.GroupVersionKind().GroupVersion() == MonitoringGroupVersion {
				continue // watched metadata only: no Go type needed
			}
			_, err := scheme.New(obj.GroupVersionKind())
			assert.NoError(t, err, "%s has no Go type in the scheme, so it cannot be listed typed", gk)
		}
	}
}

// newScheme has the kinds the bindata renders, as the host's and CNO's
// schemes do.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	require.NoError(t, apiextensionsv1.AddToScheme(s))
	return s
}
