package nmstate

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterFromInfrastructure(t *testing.T) {
	infra := func(status configv1.InfrastructureStatus) *configv1.Infrastructure {
		return &configv1.Infrastructure{Status: status}
	}
	ps := func(p configv1.PlatformType) *configv1.PlatformStatus { return &configv1.PlatformStatus{Type: p} }
	tests := []struct {
		name   string
		infra  *configv1.Infrastructure
		want   Cluster
		errHas []string
	}{
		{name: "nil", infra: nil, errHas: []string{"infrastructures.config.openshift.io/cluster is missing"}},
		{name: "empty status", infra: infra(configv1.InfrastructureStatus{}),
			errHas: []string{"no status.platformStatus.type", "BareMetal"}},
		{name: "platformStatus with empty type", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps("")}),
			errHas: []string{"no status.platformStatus.type"}},
		{name: "only the deprecated status.platform", infra: infra(configv1.InfrastructureStatus{Platform: configv1.BareMetalPlatformType}),
			want: Cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
				InfrastructureTopology: configv1.HighlyAvailableTopologyMode}},
		{name: "platformStatus wins over status.platform", infra: infra(configv1.InfrastructureStatus{Platform: configv1.AWSPlatformType,
			PlatformStatus: ps(configv1.VSpherePlatformType)}),
			want: Cluster{Platform: configv1.VSpherePlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
				InfrastructureTopology: configv1.HighlyAvailableTopologyMode}},
		{name: "unknown platform", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps("Mainframe")}),
			errHas: []string{`"Mainframe"`, "does not know", "AWS"}},
		{name: "single node", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.NonePlatformType),
			ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.SingleReplicaTopologyMode}),
			want: Cluster{Platform: configv1.NonePlatformType, ControlPlaneTopology: configv1.SingleReplicaTopologyMode,
				InfrastructureTopology: configv1.SingleReplicaTopologyMode}},
		{name: "hosted", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.KubevirtPlatformType),
			ControlPlaneTopology: configv1.ExternalTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode}),
			want: Cluster{Platform: configv1.KubevirtPlatformType, ControlPlaneTopology: configv1.ExternalTopologyMode,
				InfrastructureTopology: configv1.HighlyAvailableTopologyMode}},
		{name: "unknown control plane topology", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.AWSPlatformType),
			ControlPlaneTopology: "Triple"}), errHas: []string{`controlPlaneTopology "Triple"`, "HighlyAvailable"}},
		{name: "unknown infrastructure topology", infra: infra(configv1.InfrastructureStatus{PlatformStatus: ps(configv1.AWSPlatformType),
			InfrastructureTopology: configv1.ExternalTopologyMode}), errHas: []string{`infrastructureTopology "External"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterFromInfrastructure(tt.infra)
			if tt.errHas == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.Error(t, err)
			assert.Equal(t, ReasonInvalidInfrastructure, ReasonOf(err))
			for _, s := range tt.errHas {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}
