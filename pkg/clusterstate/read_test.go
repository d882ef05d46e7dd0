package clusterstate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestInstalled(t *testing.T) {
	crd := func(labels map[string]string, finalizing bool) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: nmstate.PoliciesCRD, Labels: labels}}
		if finalizing {
			c.Finalizers = []string{"customresourcecleanup.apiextensions.k8s.io"}
			c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return c
	}
	ours := map[string]string{nmstate.OwnerLabel: nmstate.PluginVersion}
	on := func(c *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
		c.Annotations = map[string]string{nmstate.HandlerOnAnnotation: "true"}
		return c
	}
	tests := []struct {
		name         string
		objs         []client.Object
		want, wantOn bool
	}{
		{"no CRD", nil, false, false},
		{"the plugin's CRD", []client.Object{crd(ours, false)}, true, false},
		{"the plugin's CRD, its handler on", []client.Object{on(crd(ours, false))}, true, true},
		{"another manager's CRD", []client.Object{crd(map[string]string{"app": "kubernetes-nmstate"}, false)}, false, false},
		{"another manager's CRD with the annotation", []client.Object{on(crd(map[string]string{"app": "kubernetes-nmstate"}, false))}, false, false},
		{"the plugin's CRD being deleted", []client.Object{on(crd(ours, true))}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, apiextensionsv1.AddToScheme(scheme))
			reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objs...).Build()
			got, on, err := Installed(t.Context(), reader)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantOn, on)
		})
	}
}

// While the plugin's own handler is deployed, whether it was installed is
// not read: the handler says so. Another manager's handler says nothing.
func TestInstalledNotReadWhileDeployed(t *testing.T) {
	own := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}}
	adopted := own.DeepCopy()
	adopted.OwnerReferences = []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "u", Controller: ptr.To(true)}}
	tests := []struct {
		name    string
		handler *appsv1.DaemonSet
		want    bool
		reads   int
	}{
		{"the plugin's handler", own, true, 0},
		{"no handler", nil, false, 1},
		{"the standalone operator's handler under the plugin's name", adopted, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, apiextensionsv1.AddToScheme(scheme))
			reads := 0
			reader := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					reads++
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			got, on, err := installedUnlessDeployed(t.Context(), reader, tt.handler)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want, on, "the plugin's handler says it is on")
			assert.Equal(t, tt.reads, reads, "reads of the policies CRD")
		})
	}
}

func TestCountPolicies(t *testing.T) {
	policy := func(name string) runtime.Object {
		p := &unstructured.Unstructured{}
		p.SetAPIVersion("nmstate.io/v1")
		p.SetKind("NodeNetworkConfigurationPolicy")
		p.SetName(name)
		return p
	}
	listKinds := map[schema.GroupVersionResource]string{policiesResource: "NodeNetworkConfigurationPolicyList"}
	tests := []struct {
		name string
		// list answers the list instead of the fake's objects, when set.
		list    func() (runtime.Object, error)
		objs    []runtime.Object
		want    int
		wantErr string
	}{
		{name: "none", want: 0},
		{name: "two, all in one page", objs: []runtime.Object{policy("a"), policy("b")}, want: 2},
		{name: "not served", list: func() (runtime.Object, error) {
			return nil, apierrors.NewNotFound(policiesResource.GroupResource(), "")
		}, want: 0},
		{name: "one and the server's count of the rest", list: func() (runtime.Object, error) {
			l := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*policy("a").(*unstructured.Unstructured)}}
			l.SetRemainingItemCount(ptr.To(int64(9999)))
			l.SetContinue("next")
			return l, nil
		}, want: 10000},
		{name: "more, uncounted: at least one more", list: func() (runtime.Object, error) {
			l := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*policy("a").(*unstructured.Unstructured)}}
			l.SetContinue("next")
			return l, nil
		}, want: 2},
		{name: "refused", list: func() (runtime.Object, error) {
			return nil, apierrors.NewForbidden(policiesResource.GroupResource(), "", errors.New("no"))
		}, want: -1, wantErr: "counting NodeNetworkConfigurationPolicies: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resources := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, tt.objs...)
			if tt.list != nil {
				resources.PrependReactor("list", policiesResource.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
					obj, err := tt.list()
					return true, obj, err
				})
			}
			got, err := CountPolicies(t.Context(), resources)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// CountPods counts the plugin's workloads' pods in its namespace only.
func TestCountPods(t *testing.T) {
	pod := func(namespace, app string) client.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: namespace + "-" + app, Labels: map[string]string{"app": app}}}
	}
	tests := []struct {
		name string
		objs []client.Object
		want int
	}{
		{"none", nil, 0},
		{"a handler pod ending", []client.Object{pod(nmstate.Namespace, "kubernetes-nmstate")}, 1},
		{"another app's pod in the namespace", []client.Object{pod(nmstate.Namespace, "kubernetes-nmstate-operator")}, 0},
		{"the same label elsewhere", []client.Object{pod("openshift-cnv", "kubernetes-nmstate")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, corev1.AddToScheme(scheme))
			got, err := CountPods(t.Context(), fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objs...).Build())
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
