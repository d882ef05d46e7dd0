package clusterstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestHandlerSelector(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"the plugin's handler", map[string]string{"component": "kubernetes-nmstate-handler", nmstate.OwnerLabel: nmstate.PluginVersion}, true},
		{"the standalone operator's handler", map[string]string{"component": "kubernetes-nmstate-handler", "app": "kubernetes-nmstate"}, true},
		{"another DaemonSet", map[string]string{"app": "multus"}, false},
		{"no labels", nil, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, HandlerSelector().Matches(labels.Set(tt.labels)), tt.name)
	}
}

func TestOtherHandler(t *testing.T) {
	component := map[string]string{"component": "kubernetes-nmstate-handler"}
	nmstateCR := []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "u", Controller: ptr.To(true)}}
	tests := []struct {
		name              string
		namespace, dsName string
		labels            map[string]string
		owners            []metav1.OwnerReference
		want              bool
	}{
		{"the plugin's own", nmstate.Namespace, nmstate.HandlerDaemonSet,
			map[string]string{"component": "kubernetes-nmstate-handler", nmstate.OwnerLabel: nmstate.PluginVersion}, nil, false},
		{"the plugin's own, its owner label removed by hand", nmstate.Namespace, nmstate.HandlerDaemonSet, component, nil, false},
		{"the standalone operator's, under the plugin's name", nmstate.Namespace, nmstate.HandlerDaemonSet, component, nmstateCR, true},
		{"the standalone operator's, in its namespace", "openshift-operators", nmstate.HandlerDaemonSet, component, nmstateCR, true},
		{"the owner label on a copy elsewhere", "openshift-cnv", nmstate.HandlerDaemonSet,
			map[string]string{"component": "kubernetes-nmstate-handler", nmstate.OwnerLabel: nmstate.PluginVersion}, nil, true},
	}
	for _, tt := range tests {
		obj := &metav1.ObjectMeta{Namespace: tt.namespace, Name: tt.dsName, Labels: tt.labels, OwnerReferences: tt.owners}
		assert.Equal(t, tt.want, OtherHandler(obj), tt.name)
	}
}
