package nmstate

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster is what the decision needs to know about the cluster beyond the
// user's config.
type Cluster struct {
	Platform               configv1.PlatformType
	ControlPlaneTopology   configv1.TopologyMode
	InfrastructureTopology configv1.TopologyMode
	// NoInfrastructure is set when there is no
	// infrastructures.config.openshift.io/cluster at all, for the message:
	// the platform is then unknown rather than "not reported".
	NoInfrastructure bool
	// StandaloneOperator is true while the OLM kubernetes-nmstate operator or
	// an NMState CR is present. Only one handler may run per node, so CNO then
	// stays out of the way whatever the mode says.
	StandaloneOperator bool
	// ManagedBy names whoever else deploys kubernetes-nmstate's handler, for
	// the message (e.g. "the standalone kubernetes-nmstate operator
	// (NMState CR nmstate)"); empty when nobody does. Non-empty, it defers CNO
	// just as StandaloneOperator does, which is left for callers that know
	// only that there is one (the render command's flag).
	ManagedBy string
	// StandaloneSettings is the NMState CR that ManagedBy names, as read
	// (its spec is what matters), or nil when ManagedBy names something
	// else. The message then gives the command that carries its settings
	// into the Network (MigrateNMState), the first step of a handover.
	StandaloneSettings *unstructured.Unstructured
	// OtherHandler is the namespace/name of the handler DaemonSet that
	// ManagedBy names, when that is what was found rather than the
	// standalone operator: the way to hand over is then its manager's, not
	// an OLM uninstall.
	OtherHandler string
	// DefaultOnGate is the staged-rollout lever (FeatureGate
	// KubernetesNMStateByDefault): while false, an omitted mode means disabled
	// on every platform; an explicit Enabled still works.
	DefaultOnGate bool
	// Deployed is whether this plugin runs kubernetes-nmstate: its handler
	// DaemonSet exists, or the Available condition it last wrote was for a
	// decision to run it (WasOn), which outlives a deleted DaemonSet or
	// Namespace. Policies is how many NodeNetworkConfigurationPolicies
	// exist. Together they keep a handler that enforces policies
	// (DependsOnPolicies says when they matter).
	Deployed bool
	Policies int
	// Installed is whether this plugin's policies CRD exists: it deployed
	// kubernetes-nmstate here before. While off, what KeptOnDisable names
	// is then rendered still, so that kept means restored when deleted or
	// edited, as while on (Decision.RestoreKept).
	Installed bool
}

// KnownPlatforms are the platform types of openshift/api's config/v1 this
// release knows. Any other value (a platform newer than this release, or none
// at all) is off by default, like every platform not in DefaultOnPlatforms.
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

// ClusterFromInfrastructure reads infrastructures.config.openshift.io/cluster;
// infra is nil when there is none. It never fails: kubernetes-nmstate is an
// optional part of CNO, and an Infrastructure it cannot make sense of must not
// fail CNO's Render. An empty or unknown platform is simply not one where
// kubernetes-nmstate is on by default (mode Enabled and Disabled still work),
// and empty topologies are those of clusters older than the topology fields:
// highly available. The caller fills ManagedBy and DefaultOnGate.
func ClusterFromInfrastructure(infra *configv1.Infrastructure) Cluster {
	c := Cluster{
		ControlPlaneTopology:   configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
	}
	if infra == nil {
		c.NoInfrastructure = true
		return c
	}
	if infra.Status.PlatformStatus != nil {
		c.Platform = infra.Status.PlatformStatus.Type
	}
	if c.Platform == "" {
		// status.platform is deprecated but is all that clusters installed
		// before 4.2 may have.
		c.Platform = infra.Status.Platform
	}
	if t := infra.Status.ControlPlaneTopology; t != "" {
		c.ControlPlaneTopology = t
	}
	if t := infra.Status.InfrastructureTopology; t != "" {
		c.InfrastructureTopology = t
	}
	return c
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
func (c Cluster) String() string {
	return fmt.Sprintf("platform %s, control plane topology %s, infrastructure topology %s",
		c.platformName(), boundedName(string(c.ControlPlaneTopology)), boundedName(string(c.InfrastructureTopology)))
}

func (c Cluster) platformName() string {
	if c.Platform == "" && c.NoInfrastructure {
		return "unknown (there is no infrastructures.config.openshift.io/cluster)"
	}
	if c.Platform == "" {
		return "not reported by infrastructures.config.openshift.io/cluster"
	}
	if !slices.Contains(KnownPlatforms, c.Platform) {
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
