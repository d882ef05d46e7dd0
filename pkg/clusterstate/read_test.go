package clusterstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestInstalled(t *testing.T) {
	crd := func(labels map[string]string, finalizing bool) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: nmstate.CRDNames()[0], Labels: labels}}
		if finalizing {
			c.Finalizers = []string{"customresourcecleanup.apiextensions.k8s.io"}
			c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return c
	}
	ours := map[string]string{nmstate.OwnerLabel: nmstate.PluginVersion}
	tests := []struct {
		name string
		objs []client.Object
		want bool
	}{
		{"no CRD", nil, false},
		{"the plugin's CRD", []client.Object{crd(ours, false)}, true},
		{"another manager's CRD", []client.Object{crd(map[string]string{"app": "kubernetes-nmstate"}, false)}, false},
		{"the plugin's CRD being deleted", []client.Object{crd(ours, true)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, apiextensionsv1.AddToScheme(scheme))
			reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objs...).Build()
			got, err := Installed(t.Context(), reader)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
