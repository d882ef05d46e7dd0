package nmstate

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
)

func TestClusterFromInfrastructure(t *testing.T) {
	infra := func(status configv1.InfrastructureStatus) *configv1.Infrastructure {
		return &configv1.Infrastructure{Status: status}
	}
	ps := func(p configv1.PlatformType) *configv1.PlatformStatus { return &configv1.PlatformStatus{Type: p} }
	ha := configv1.HighlyAvailableTopologyMode
	tests := []struct {
		name  string
		infra *configv1.Infrastructure
		want  Cluster
	}{
		{name: "no Infrastructure at all", infra: nil,
			want: Cluster{ControlPlaneTopology: ha, InfrastructureTopology: ha, NoInfrastructure: true}},
		{name: "empty status", infra: infra(configv1.InfrastructureStatus{}),
			want: Cluster{ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "platformStatus with empty type", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps("")}),
			want: Cluster{ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "only the deprecated status.platform", infra: infra(configv1.InfrastructureStatus{Platform: configv1.BareMetalPlatformType}),
			want: Cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "platformStatus wins over status.platform", infra: infra(configv1.InfrastructureStatus{Platform: configv1.AWSPlatformType,
			PlatformStatus: ps(configv1.VSpherePlatformType)}),
			want: Cluster{Platform: configv1.VSpherePlatformType, ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "unknown platform is kept as it is", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps("Mainframe")}),
			want: Cluster{Platform: "Mainframe", ControlPlaneTopology: ha, InfrastructureTopology: ha}},
		{name: "single node", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.NonePlatformType),
			ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.SingleReplicaTopologyMode}),
			want: Cluster{Platform: configv1.NonePlatformType, ControlPlaneTopology: configv1.SingleReplicaTopologyMode,
				InfrastructureTopology: configv1.SingleReplicaTopologyMode}},
		{name: "hosted", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.KubevirtPlatformType),
			ControlPlaneTopology: configv1.ExternalTopologyMode, InfrastructureTopology: ha}),
			want: Cluster{Platform: configv1.KubevirtPlatformType, ControlPlaneTopology: configv1.ExternalTopologyMode,
				InfrastructureTopology: ha}},
		{name: "unknown topologies are kept as they are", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.AWSPlatformType),
			ControlPlaneTopology: "Triple", InfrastructureTopology: configv1.DualReplicaTopologyMode}),
			want: Cluster{Platform: configv1.AWSPlatformType, ControlPlaneTopology: "Triple", InfrastructureTopology: configv1.DualReplicaTopologyMode}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ClusterFromInfrastructure(tt.infra))
		})
	}
}

func TestClusterString(t *testing.T) {
	tests := []struct {
		name    string
		cluster Cluster
		want    string
	}{
		{"known", Cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "SingleReplica"},
			"platform BareMetal, control plane topology HighlyAvailable, infrastructure topology SingleReplica"},
		{"no platform", Cluster{ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "HighlyAvailable"},
			"platform not reported by infrastructures.config.openshift.io/cluster, control plane topology HighlyAvailable, infrastructure topology HighlyAvailable"},
		{"no Infrastructure", ClusterFromInfrastructure(nil),
			"platform unknown (there is no infrastructures.config.openshift.io/cluster), control plane topology HighlyAvailable, infrastructure topology HighlyAvailable"},
		{"unknown platform", Cluster{Platform: "Mainframe", ControlPlaneTopology: "Triple", InfrastructureTopology: "HighlyAvailable"},
			`platform "Mainframe" (unknown to this release), control plane topology Triple, infrastructure topology HighlyAvailable`},
		{"hostile values are quoted and cut", Cluster{Platform: "Evil\nPlatform", ControlPlaneTopology: configv1.TopologyMode(string(make([]byte, 200))), InfrastructureTopology: "a b"},
			`platform "Evil\nPlatform" (unknown to this release), control plane topology "` + strings.Repeat(`\x00`, 15) + `\x0...(802 bytes), infrastructure topology "a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cluster.String())
		})
	}
}
