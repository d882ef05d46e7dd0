package nmstate

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InfrastructureOf, with the defaults newCluster gives empty topologies.
func TestInfrastructureOf(t *testing.T) {
	infra := func(status configv1.InfrastructureStatus) *configv1.Infrastructure {
		return &configv1.Infrastructure{Status: status}
	}
	ps := func(p configv1.PlatformType) *configv1.PlatformStatus { return &configv1.PlatformStatus{Type: p} }
	ha := configv1.HighlyAvailableTopologyMode
	tests := []struct {
		name  string
		infra *configv1.Infrastructure
		want  cluster
	}{
		{name: "no Infrastructure at all", infra: nil,
			want: cluster{ControlPlaneTopology: ha, InfrastructureTopology: ha, NoInfrastructure: true}},
		{name: "empty status", infra: infra(configv1.InfrastructureStatus{}),
			want: cluster{ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "platformStatus with empty type", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps("")}),
			want: cluster{ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "only the deprecated status.platform", infra: infra(configv1.InfrastructureStatus{Platform: configv1.BareMetalPlatformType}),
			want: cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "platformStatus wins over status.platform", infra: infra(configv1.InfrastructureStatus{Platform: configv1.AWSPlatformType,
			PlatformStatus: ps(configv1.VSpherePlatformType)}),
			want: cluster{Platform: configv1.VSpherePlatformType, ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "unknown platform is kept as it is", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps("Mainframe")}),
			want: cluster{Platform: "Mainframe", ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "single node", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.NonePlatformType),
			ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.SingleReplicaTopologyMode}),
			want: cluster{Platform: configv1.NonePlatformType, ControlPlaneTopology: configv1.SingleReplicaTopologyMode,
				InfrastructureTopology: configv1.SingleReplicaTopologyMode}},
		{name: "hosted", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.KubevirtPlatformType),
			ControlPlaneTopology: configv1.ExternalTopologyMode, InfrastructureTopology: ha}),
			want: cluster{Platform: configv1.KubevirtPlatformType, ControlPlaneTopology: configv1.ExternalTopologyMode,
				InfrastructureTopology: ha}},
		{name: "unknown topologies are kept as they are", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.AWSPlatformType),
			ControlPlaneTopology: "Triple", InfrastructureTopology: configv1.DualReplicaTopologyMode}),
			want: cluster{Platform: configv1.AWSPlatformType, ControlPlaneTopology: "Triple", InfrastructureTopology: configv1.DualReplicaTopologyMode}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, newCluster(Input{Infrastructure: InfrastructureOf(tt.infra)}))
		})
	}
}

func TestClusterString(t *testing.T) {
	tests := []struct {
		name    string
		cluster cluster
		want    string
	}{
		{"known", cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "SingleReplica"},
			"platform BareMetal, control plane topology HighlyAvailable, infrastructure topology SingleReplica"},
		{"no platform", cluster{ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "HighlyAvailable"},
			"platform not reported by infrastructures.config.openshift.io/cluster, control plane topology HighlyAvailable, infrastructure topology HighlyAvailable"},
		{"no Infrastructure", newCluster(Input{Infrastructure: InfrastructureOf(nil)}),
			"platform unknown (there is no infrastructures.config.openshift.io/cluster), control plane topology HighlyAvailable, infrastructure topology HighlyAvailable"},
		{"unknown platform", cluster{Platform: "Mainframe", ControlPlaneTopology: "Triple", InfrastructureTopology: "HighlyAvailable"},
			`platform "Mainframe" (unknown to this release), control plane topology Triple, infrastructure topology HighlyAvailable`},
		{"hostile values are quoted and cut", cluster{Platform: "Evil\nPlatform", ControlPlaneTopology: configv1.TopologyMode(string(make([]byte, 200))), InfrastructureTopology: "a b"},
			`platform "Evil\nPlatform" (unknown to this release), control plane topology "` + strings.Repeat(`\x00`, 15) + `\x0...(802 bytes), infrastructure topology "a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cluster.String())
		})
	}
}

// Deployed holds while the plugin's own handler exists, or, once it is
// gone, while the policies CRD says the last decision carried out ran it.
// The Network's conditions say nothing of it: a failed sync overwrites
// them.
func TestNewClusterDeployed(t *testing.T) {
	own := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: HandlerDaemonSet}}
	elsewhere := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-cnv", Name: HandlerDaemonSet}}
	kept := []any{map[string]any{"type": ConditionAvailable, "status": "True", "reason": ReasonKeptForExistingPolicies}}
	tests := []struct {
		name      string
		handler   *appsv1.DaemonSet
		handlerOn bool
		previous  []any
		want      bool
	}{
		{"its handler runs", own, false, nil, true},
		{"its handler deleted while on", nil, true, nil, true},
		{"its handler deleted after a decision to stop it", nil, false, kept, false},
		{"never deployed", nil, false, nil, false},
		{"another's handler is not its own", elsewhere, false, nil, false},
	}
	for _, tt := range tests {
		network := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": tt.previous}}}
		c := newCluster(Input{Network: network, State: State{Handler: tt.handler, HandlerOn: tt.handlerOn, Policies: 3, Installed: true}})
		assert.Equal(t, tt.want, c.Deployed, tt.name)
		assert.Equal(t, 3, c.Policies, tt.name)
		assert.True(t, c.Installed, tt.name)
	}
}
