package nmstate

import (
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// Cluster is what the decision needs to know about the cluster beyond the
// user's config.
type Cluster struct {
	Platform               configv1.PlatformType
	ControlPlaneTopology   configv1.TopologyMode
	InfrastructureTopology configv1.TopologyMode
	// StandaloneOperator is true while the OLM kubernetes-nmstate operator or
	// an NMState CR is present. Only one handler may run per node, so CNO then
	// stays out of the way whatever the mode says.
	StandaloneOperator bool
	// DefaultOnGate is the staged-rollout lever (FeatureGate
	// KubernetesNMStateByDefault): while false, an omitted mode means disabled
	// on every platform; an explicit Enabled still works.
	DefaultOnGate bool
}

// KnownPlatforms are the platform types of openshift/api's config/v1 this
// release knows. Any other value is treated as a bad Infrastructure rather
// than guessed at.
var KnownPlatforms = []configv1.PlatformType{
	configv1.AWSPlatformType,
	configv1.AzurePlatformType,
	configv1.BareMetalPlatformType,
	configv1.GCPPlatformType,
	configv1.LibvirtPlatformType,
	configv1.OpenStackPlatformType,
	configv1.NonePlatformType,
	configv1.VSpherePlatformType,
	configv1.OvirtPlatformType,
	configv1.IBMCloudPlatformType,
	configv1.KubevirtPlatformType,
	configv1.EquinixMetalPlatformType,
	configv1.PowerVSPlatformType,
	configv1.AlibabaCloudPlatformType,
	configv1.NutanixPlatformType,
	configv1.ExternalPlatformType,
}

// DefaultOnPlatforms are where node network configuration is routine, so the
// nmstate API is there unless the user says otherwise.
var DefaultOnPlatforms = []configv1.PlatformType{
	configv1.BareMetalPlatformType,
	configv1.NonePlatformType,
	configv1.VSpherePlatformType,
}

var knownControlPlaneTopologies = []configv1.TopologyMode{
	configv1.HighlyAvailableTopologyMode,
	configv1.HighlyAvailableArbiterMode,
	configv1.SingleReplicaTopologyMode,
	configv1.DualReplicaTopologyMode,
	configv1.ExternalTopologyMode,
}

var knownInfrastructureTopologies = []configv1.TopologyMode{
	configv1.HighlyAvailableTopologyMode,
	configv1.SingleReplicaTopologyMode,
}

// ClusterFromInfrastructure reads infrastructures.config.openshift.io/cluster.
// The caller fills StandaloneOperator and DefaultOnGate, which come from
// elsewhere. Problems are *Error with ReasonInvalidInfrastructure.
func ClusterFromInfrastructure(infra *configv1.Infrastructure) (Cluster, error) {
	if infra == nil {
		return Cluster{}, inputError(ReasonInvalidInfrastructure,
			"infrastructures.config.openshift.io/cluster is missing; it is needed to know the platform")
	}
	var platform configv1.PlatformType
	if infra.Status.PlatformStatus != nil {
		platform = infra.Status.PlatformStatus.Type
	}
	if platform == "" {
		// status.platform is deprecated but is all that clusters installed
		// before 4.2 may have.
		platform = infra.Status.Platform
	}
	if platform == "" {
		return Cluster{}, inputError(ReasonInvalidInfrastructure,
			"infrastructures.config.openshift.io/cluster has no status.platformStatus.type (nor status.platform); valid platforms are %s",
			join(KnownPlatforms))
	}
	if !slices.Contains(KnownPlatforms, platform) {
		return Cluster{}, inputError(ReasonInvalidInfrastructure,
			"infrastructures.config.openshift.io/cluster has status.platformStatus.type %s, which this release does not know; valid platforms are %s",
			quote(string(platform)), join(KnownPlatforms))
	}

	c := Cluster{
		Platform:               platform,
		ControlPlaneTopology:   infra.Status.ControlPlaneTopology,
		InfrastructureTopology: infra.Status.InfrastructureTopology,
	}
	// Clusters older than the topology fields are highly available.
	if c.ControlPlaneTopology == "" {
		c.ControlPlaneTopology = configv1.HighlyAvailableTopologyMode
	}
	if c.InfrastructureTopology == "" {
		c.InfrastructureTopology = configv1.HighlyAvailableTopologyMode
	}
	if !slices.Contains(knownControlPlaneTopologies, c.ControlPlaneTopology) {
		return Cluster{}, inputError(ReasonInvalidInfrastructure,
			"infrastructures.config.openshift.io/cluster has status.controlPlaneTopology %s; valid topologies are %s",
			quote(string(c.ControlPlaneTopology)), join(knownControlPlaneTopologies))
	}
	if !slices.Contains(knownInfrastructureTopologies, c.InfrastructureTopology) {
		return Cluster{}, inputError(ReasonInvalidInfrastructure,
			"infrastructures.config.openshift.io/cluster has status.infrastructureTopology %s; valid topologies are %s",
			quote(string(c.InfrastructureTopology)), join(knownInfrastructureTopologies))
	}
	return c, nil
}

func join[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// String is for messages: "platform BareMetal, control plane HighlyAvailable".
func (c Cluster) String() string {
	return fmt.Sprintf("platform %s, control plane topology %s, infrastructure topology %s",
		c.Platform, c.ControlPlaneTopology, c.InfrastructureTopology)
}
