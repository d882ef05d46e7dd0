package clusterstate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestOtherManager(t *testing.T) {
	handler := func(namespace, name string, labels map[string]string, owners ...metav1.OwnerReference) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, OwnerReferences: owners}}
	}
	controlledBy := func(apiVersion, kind string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "uid", Controller: ptr.To(true)}
	}
	ours := map[string]string{"component": "kubernetes-nmstate-handler", nmstate.OwnerLabel: nmstate.PluginVersion}
	theirs := map[string]string{"app": "kubernetes-nmstate", "component": "kubernetes-nmstate-handler"}
	rendered := handler(nmstate.Namespace, nmstate.HandlerDaemonSet, ours)
	cnao := handler("openshift-cnv", "nmstate-handler", theirs)
	operatorWith := func(replicas, available int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: nmstate.Namespace, Name: "nmstate-operator",
			Labels: map[string]string{"app": "kubernetes-nmstate-operator"}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)}, Status: appsv1.DeploymentStatus{AvailableReplicas: available}}
	}
	operator, scaledToZero, crashing := operatorWith(1, 1), operatorWith(0, 0), operatorWith(1, 0)
	newCR := func(name string) *unstructured.Unstructured {
		cr := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"logLevel": "debug"}}}
		cr.SetAPIVersion("nmstate.io/v1")
		cr.SetKind("NMState")
		cr.SetName(name)
		return cr
	}
	cr := newCR("nmstate")

	tests := []struct {
		name    string
		noCRD   bool
		objs    []client.Object
		managed string
		// settings is the name of the CR returned whole, if any.
		settings string
		// left is the NMState CR nothing runs for, idle whether the
		// operator's Deployment that runs nothing is returned.
		left string
		idle bool
	}{
		{name: "nothing", managed: ""},
		{name: "no NMState CRD", noCRD: true, managed: ""},
		{name: "only the rendered handler", objs: []client.Object{rendered}, managed: ""},
		{name: "a DaemonSet that is no handler", objs: []client.Object{handler("openshift-multus", "multus", map[string]string{"app": "multus"})}, managed: ""},
		{name: "cluster-network-addons-operator's handler beside ours", objs: []client.Object{rendered, cnao},
			managed: "whoever deployed DaemonSet openshift-cnv/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render"},
		{name: "our name, controlled by the standalone operator's NMState CR",
			objs:    []client.Object{handler(nmstate.Namespace, nmstate.HandlerDaemonSet, theirs, controlledBy("nmstate.io/v1", "NMState"))},
			managed: "whoever deployed DaemonSet openshift-nmstate/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render"},
		{name: "our name, our label removed by hand: still ours",
			objs: []client.Object{handler(nmstate.Namespace, nmstate.HandlerDaemonSet, theirs)}, managed: ""},
		{name: "our name, controlled by network.operator/cluster (CNO): ours",
			objs: []client.Object{handler(nmstate.Namespace, nmstate.HandlerDaemonSet, theirs, controlledBy("operator.openshift.io/v1", "Network"))}, managed: ""},
		{name: "our name, a reference that is no controller's: ours",
			objs:    []client.Object{handler(nmstate.Namespace, nmstate.HandlerDaemonSet, ours, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "uid"})},
			managed: ""},
		{name: "our label on a copy elsewhere", objs: []client.Object{handler("nmstate", nmstate.HandlerDaemonSet, ours)},
			managed: "whoever deployed DaemonSet nmstate/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render"},
		{name: "another name in our namespace", objs: []client.Object{handler(nmstate.Namespace, "nmstate-handler-worker", ours)},
			managed: "whoever deployed DaemonSet openshift-nmstate/nmstate-handler-worker, a kubernetes-nmstate handler the Cluster Network Operator did not render"},
		{name: "the NMState CR comes first, with its settings", objs: []client.Object{operator, cr, cnao},
			managed: "the standalone kubernetes-nmstate operator (NMState CR nmstate)", settings: "nmstate"},
		{name: "the operator available with no CR deploys nothing: another handler is who runs", objs: []client.Object{operator, cnao},
			managed: "whoever deployed DaemonSet openshift-cnv/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render"},
		{name: "the operator available with no CR deploys nothing: ours keeps running", objs: []client.Object{operator, rendered}},
		{name: "an NMState CR and its available operator", objs: []client.Object{cr, operator, rendered},
			managed: "the standalone kubernetes-nmstate operator (NMState CR nmstate)", settings: "nmstate"},
		{name: "two NMState CRs: named, but no settings until the operator deletes one", objs: []client.Object{cr, newCR("second"), operator},
			managed: "the standalone kubernetes-nmstate operator (NMState CR nmstate)"},
		{name: "an NMState CR whose handler runs, its operator gone",
			objs:    []client.Object{cr, handler(nmstate.Namespace, nmstate.HandlerDaemonSet, theirs, controlledBy("nmstate.io/v1", "NMState"))},
			managed: "the standalone kubernetes-nmstate operator (NMState CR nmstate)", settings: "nmstate"},
		{name: "a leftover NMState CR: ours keeps running", objs: []client.Object{cr, rendered}, left: "nmstate"},
		{name: "the operator scaled to 0: ours keeps running", objs: []client.Object{scaledToZero, rendered}, idle: true},
		{name: "the operator crash-looping, with its CR: ours keeps running", objs: []client.Object{crashing, cr, rendered}, left: "nmstate", idle: true},
		{name: "the operator scaled to 0 beside another handler", objs: []client.Object{scaledToZero, cnao},
			managed: "whoever deployed DaemonSet openshift-cnv/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, clientgoscheme.AddToScheme(scheme))
			var typed, crs []runtime.Object
			for _, obj := range tt.objs {
				if _, cr := obj.(*unstructured.Unstructured); cr {
					crs = append(crs, obj)
				} else {
					typed = append(typed, obj)
				}
			}
			resources := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{nmstatesResource: "NMStateList"}, crs...)
			if tt.noCRD {
				resources.PrependReactor("list", nmstatesResource.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewNotFound(nmstatesResource.GroupResource(), "")
				})
			}
			reader := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(typed...).Build()
			got, err := OtherManager(t.Context(), reader, resources)
			require.NoError(t, err)
			assert.Equal(t, tt.managed, got.ManagedBy)
			assert.Equal(t, tt.left, got.LeftCR)
			assert.Equal(t, tt.idle, got.Operator != nil, "the operator's Deployment that runs nothing: %+v", got.Operator)
			if strings.HasPrefix(tt.managed, "whoever deployed DaemonSet ") {
				assert.Equal(t, strings.TrimSuffix(strings.TrimPrefix(tt.managed, "whoever deployed DaemonSet "),
					", a kubernetes-nmstate handler the Cluster Network Operator did not render"), got.HandlerName, "the handler is named for the message")
			} else {
				assert.Empty(t, got.HandlerName)
			}
			if tt.settings == "" {
				assert.Nil(t, got.StandaloneCR)
				return
			}
			require.NotNil(t, got.StandaloneCR)
			assert.Equal(t, tt.settings, got.StandaloneCR.GetName())
			assert.Equal(t, map[string]any{"logLevel": "debug"}, got.StandaloneCR.Object["spec"], "the CR is read whole")
		})
	}
}
