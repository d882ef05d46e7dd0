package nmstate

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Infrastructure is what the decision and the render read of
// infrastructures.config.openshift.io/cluster: CNO's Bootstrap has these
// fields already, the host reads them with InfrastructureOf. An empty or
// unknown platform is simply not one where kubernetes-nmstate is on by
// default (mode Enabled and Disabled still work), and an empty topology is
// that of a cluster older than the topology fields: highly available.
type Infrastructure struct {
	Platform               configv1.PlatformType
	ControlPlaneTopology   configv1.TopologyMode
	InfrastructureTopology configv1.TopologyMode
	// Missing is set when there is no Infrastructure at all, for the
	// message: the platform is then unknown rather than "not reported".
	Missing bool
}

// cluster is everything the decision reads beyond the user's config, as
// Render gathers it from its Input.
type cluster struct {
	Platform               configv1.PlatformType
	ControlPlaneTopology   configv1.TopologyMode
	InfrastructureTopology configv1.TopologyMode
	NoInfrastructure       bool
	// ManagedBy names whoever else deploys kubernetes-nmstate's handler
	// (Other.ManagedBy); non-empty, it defers the plugin. StandaloneCR and
	// OtherHandler say how to hand over: the NMState CR's settings to carry
	// over, or the other manager's DaemonSet.
	ManagedBy    string
	StandaloneCR *unstructured.Unstructured
	OtherHandler string
	// CarryOver is what the migration code made of StandaloneCR, for the
	// message: the command, or why there is none.
	CarryOver carryOver
	// DefaultOnGate is the staged-rollout lever (FeatureGate
	// KubernetesNMStateByDefault): while false, an omitted mode means disabled
	// on every platform; an explicit Enabled still works.
	DefaultOnGate bool
	// Deployed is whether this plugin runs kubernetes-nmstate: its handler
	// DaemonSet exists, or the last decision it carried out ran it
	// (State.HandlerOn), which outlives failed syncs and a deleted DaemonSet
	// or Namespace. Policies is how many NodeNetworkConfigurationPolicies
	// exist. Together they keep a handler that enforces policies
	// (dependsOnPolicies says when they matter).
	Deployed bool
	Policies int
	// Installed is whether this plugin's policies CRD exists: it deployed
	// kubernetes-nmstate here before. While off, what KeptOnDisable names
	// is then rendered still, so that kept means restored when deleted or
	// edited, as while on (Decision.RestoreKept).
	Installed bool
}

// carryOver is the oc command that carries an NMState CR's settings into
// the Network, or the error that says why they cannot be.
type carryOver struct {
	Command string
	Err     error
}

// knownPlatforms are the platform types of openshift/api's config/v1 this
// release knows. Any other value (a platform newer than this release, or none
// at all) is off by default, like every platform not in defaultOnPlatforms.
var knownPlatforms = []configv1.PlatformType{
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

// defaultOnPlatforms are where node network configuration is routine, so the
// nmstate API is there unless the user says otherwise.
var defaultOnPlatforms = []configv1.PlatformType{
	configv1.BareMetalPlatformType,
	configv1.NonePlatformType,
	configv1.VSpherePlatformType,
}

// InfrastructureOf reads infrastructures.config.openshift.io/cluster; infra
// is nil when there is none. It never fails: kubernetes-nmstate is an
// optional part of CNO, and an Infrastructure it cannot make sense of must
// not fail CNO's Render.
func InfrastructureOf(infra *configv1.Infrastructure) Infrastructure {
	if infra == nil {
		return Infrastructure{Missing: true}
	}
	i := Infrastructure{ControlPlaneTopology: infra.Status.ControlPlaneTopology, InfrastructureTopology: infra.Status.InfrastructureTopology}
	if infra.Status.PlatformStatus != nil {
		i.Platform = infra.Status.PlatformStatus.Type
	}
	if i.Platform == "" {
		// status.platform is deprecated but is all that clusters installed
		// before 4.2 may have.
		i.Platform = infra.Status.Platform
	}
	return i
}

func join[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// String is for messages: "platform BareMetal, control plane topology
// HighlyAvailable, infrastructure topology HighlyAvailable". Values come from
// the Infrastructure status, so they are quoted and bounded when unexpected.
func (c cluster) String() string {
	return fmt.Sprintf("platform %s, control plane topology %s, infrastructure topology %s",
		c.platformName(), boundedName(string(c.ControlPlaneTopology)), boundedName(string(c.InfrastructureTopology)))
}

func (c cluster) platformName() string {
	if c.Platform == "" && c.NoInfrastructure {
		return "unknown (there is no infrastructures.config.openshift.io/cluster)"
	}
	if c.Platform == "" {
		return "not reported by infrastructures.config.openshift.io/cluster"
	}
	if !slices.Contains(knownPlatforms, c.Platform) {
		return quote(string(c.Platform)) + " (unknown to this release)"
	}
	return string(c.Platform)
}

// boundedName keeps a well-formed enum value as it is and quotes and cuts
// anything else.
func boundedName(s string) string {
	if len(s) <= 32 && strings.IndexFunc(s, notLetter) < 0 {
		return s
	}
	return quote(s)
}

func notLetter(r rune) bool { return !unicode.IsLetter(r) }

// KnownPlatforms are the platform types this release knows, for a caller
// that checks a platform it was given (the render command's flag). A copy:
// no importer can change the decision table.
func KnownPlatforms() []configv1.PlatformType { return slices.Clone(knownPlatforms) }
