package clusterstate

import (
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestInstalled(t *testing.T) {
	crd := func(labels map[string]string, finalizing bool) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: nmstate.CRDNames[0], Labels: labels}}
		if finalizing {
			c.Finalizers = []string{"customresourcecleanup.apiextensions.k8s.io"}
			c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return c
	}
	ours := map[string]string{nmstate.OwnerLabel: nmstate.Version}
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

// Deployed holds while the plugin's own handler exists, or, once it is
// gone, while the last Available condition was for running it.
func TestApplyDeployed(t *testing.T) {
	own := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}}
	elsewhere := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-cnv", Name: nmstate.HandlerDaemonSet}}
	kept := []operv1.OperatorCondition{{Type: nmstate.ConditionAvailable, Status: operv1.ConditionTrue, Reason: nmstate.ReasonKeptForExistingPolicies}}
	disabled := []operv1.OperatorCondition{{Type: nmstate.ConditionAvailable, Status: operv1.ConditionFalse, Reason: nmstate.ReasonUserDisabled}}
	tests := []struct {
		name     string
		handler  *appsv1.DaemonSet
		previous []operv1.OperatorCondition
		want     bool
	}{
		{"its handler runs", own, nil, true},
		{"its handler deleted while kept for policies", nil, kept, true},
		{"its handler deleted after a Disabled", nil, disabled, false},
		{"never deployed", nil, nil, false},
		{"another's handler is not its own", elsewhere, disabled, false},
	}
	for _, tt := range tests {
		var c nmstate.Cluster
		State{Handler: tt.handler, Policies: 3, Installed: true}.Apply(&c, tt.previous)
		assert.Equal(t, tt.want, c.Deployed, tt.name)
		assert.Equal(t, 3, c.Policies, tt.name)
		assert.True(t, c.Installed, tt.name)
	}
}
