package clusterstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestHandlerSelector(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"the plugin's handler", map[string]string{"component": "kubernetes-nmstate-handler", nmstate.OwnerLabel: nmstate.Version}, true},
		{"the standalone operator's handler", map[string]string{"component": "kubernetes-nmstate-handler", "app": "kubernetes-nmstate"}, true},
		{"another DaemonSet", map[string]string{"app": "multus"}, false},
		{"no labels", nil, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, HandlerSelector().Matches(labels.Set(tt.labels)), tt.name)
	}
}

func TestOtherHandler(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"the plugin's own", map[string]string{"component": "kubernetes-nmstate-handler", nmstate.OwnerLabel: nmstate.Version}, false},
		{"the standalone operator's", map[string]string{"component": "kubernetes-nmstate-handler"}, true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, OtherHandler(&metav1.ObjectMeta{Labels: tt.labels}), tt.name)
	}
}
