package nmstate

import (
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// Decision is whether kubernetes-nmstate runs, and why in words a user can act on.
type Decision struct {
	Enabled bool
	Reason  string
	Message string
	// RestoreKept is set on a decision not to run kubernetes-nmstate on a
	// cluster where the plugin deployed it before (cluster.Installed), unless
	// another manager is in charge (it renders its own): Render then renders
	// what KeptOnDisable names, so that those are restored when deleted and
	// their fields when edited, as while on.
	RestoreKept bool
}

// Renders reports whether Render renders anything for d.
func (d Decision) Renders() bool { return d.Enabled || d.RestoreKept }

const (
	howToEnable  = "to enable it, run: oc patch network.operator cluster --type merge -p '{\"spec\":{\"kubernetesNMState\":{\"mode\":\"Enabled\"}}}'"
	howToDisable = "to disable it, set spec.kubernetesNMState.mode to Disabled with: oc edit network.operator cluster"
)

// decide implements the decision table of docs/decision-table.md.
func decide(cfg Config, c cluster) Decision {
	d := tableDecision(cfg, c)
	d.RestoreKept = !d.Enabled && c.Installed && d.Reason != ReasonManagedElsewhere
	// A default that turns off (an upgrade, a gate, a removed mode) must not
	// silently stop enforcing the policies users rely on: only an explicit
	// Disabled removes a running handler that has policies to enforce.
	if dependsOnPolicies(cfg, d) && c.Deployed && c.Policies > 0 {
		return Decision{Enabled: true, Reason: ReasonKeptForExistingPolicies,
			Message: fmt.Sprintf("%s, but it keeps running because %s would otherwise no longer be enforced; "+
				"to remove it, set spec.kubernetesNMState.mode to Disabled with: oc patch network.operator cluster --type merge -p '{\"spec\":{\"kubernetesNMState\":{\"mode\":\"Disabled\"}}}'",
				strings.TrimSuffix(d.Message, "; "+howToEnable), policyCount(c.Policies))}
	}
	return d
}

// dependsOnPolicies reports whether d, made with cluster.Deployed and
// cluster.Policies unset, could change once they are read: only a default
// that is off can be kept on by them. Callers read them only then, so a
// cluster where kubernetes-nmstate is on never lists its policies.
func dependsOnPolicies(cfg Config, d Decision) bool {
	return !d.Enabled && cfg.Mode == ModeDefault && d.Reason != ReasonManagedElsewhere
}

func tableDecision(cfg Config, c cluster) Decision {
	inputs := fmt.Sprintf("%s, mode %s", c, modeName(cfg.Mode))

	if who := c.ManagedBy; who != "" {
		return Decision{
			Reason: ReasonManagedElsewhere,
			Message: handoverMessage(fmt.Sprintf("kubernetes-nmstate is managed by %s, "+
				"so the Cluster Network Operator deploys nothing: only one handler may run per node (%s); "+
				"to hand over to the Cluster Network Operator, ", who, inputs), cfg, c),
		}
	}

	switch cfg.Mode {
	case ModeEnabled:
		return Decision{Enabled: true, Reason: ReasonUserEnabled,
			Message: fmt.Sprintf("kubernetes-nmstate is enabled by spec.kubernetesNMState.mode (%s)%s; %s", inputs, placementNote(c), howToDisable)}
	case ModeDisabled:
		return Decision{Reason: ReasonUserDisabled,
			Message: fmt.Sprintf("kubernetes-nmstate is disabled by spec.kubernetesNMState.mode (%s); the nmstate.io CRDs and NodeNetworkConfigurationPolicies are kept; %s", inputs, howToEnable)}
	}

	if !c.DefaultOnGate {
		return Decision{Reason: ReasonDefaultGateOff,
			Message: fmt.Sprintf("kubernetes-nmstate is off by default in this release: feature gate KubernetesNMStateByDefault is not enabled (%s); %s", inputs, howToEnable)}
	}
	if c.ControlPlaneTopology == configv1.ExternalTopologyMode {
		return Decision{Reason: ReasonPlatformNotDefault,
			Message: fmt.Sprintf("kubernetes-nmstate is off by default with a hosted (External) control plane (%s); %s", inputs, howToEnable)}
	}
	if slices.Contains(defaultOnPlatforms, c.Platform) {
		return Decision{Enabled: true, Reason: ReasonPlatformDefault,
			Message: fmt.Sprintf("kubernetes-nmstate is on by default on %s (%s); %s", c.Platform, inputs, howToDisable)}
	}
	platform := string(c.Platform)
	if !slices.Contains(knownPlatforms, c.Platform) {
		platform = "platform " + c.platformName()
	}
	return Decision{Reason: ReasonPlatformNotDefault,
		Message: fmt.Sprintf("kubernetes-nmstate is off by default on %s; it is on by default only on %s (%s); %s",
			platform, join(defaultOnPlatforms), inputs, howToEnable)}
}

// maxMessage bounds a decision's message, and so the Available condition's
// (docs/troubleshooting.md).
const maxMessage = 1024

// handoverMessage ends the message of a standalone operator in charge: how
// to remove it, and first, for an NMState CR, the command that carries its
// settings over, when it fits the message.
func handoverMessage(start string, cfg Config, c cluster) string {
	remove := "remove it (the standalone operator: run `oc delete nmstates --all` and uninstall the kubernetes-nmstate operator); " +
		"your NodeNetworkConfigurationPolicies are kept"
	if c.OtherHandler != "" {
		// Not the OLM operator: OpenShift Virtualization's
		// cluster-network-addons-operator, say, or one made by hand.
		remove = "stop whoever deployed DaemonSet " + c.OtherHandler + " from deploying it (for an operator, its own setting for kubernetes-nmstate), " +
			"then delete the DaemonSet if it stays; your NodeNetworkConfigurationPolicies are kept"
	}
	carry := c.CarryOver
	switch {
	case c.StandaloneCR == nil:
		return start + remove
	case carry.Err != nil:
		return start + "first set spec.kubernetesNMState yourself: the NMState CR's settings cannot be carried over as they are (" +
			cut(carry.Err.Error(), maxMessage/3) + "); then " + remove
	}
	msg := start + "first carry the NMState CR's settings over with: " + carry.Command + "; then " + remove
	if len(msg) <= maxMessage {
		return msg
	}
	return start + fmt.Sprintf("first carry the NMState CR's settings over into spec.kubernetesNMState (the command, %d bytes, is too long for this message; "+
		"the user guide's table \"From the NMState CR\" maps each field); then %s", len(carry.Command), remove)
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-len("...")], "") + "..."
}

// modeName names the mode for the message; a value that is no mode is
// quoted and cut, as the platform and topologies are, so that the message
// stays bounded whatever it is given.
func modeName(m Mode) string {
	if m == ModeDefault {
		return "omitted (platform default)"
	}
	return boundedName(string(m))
}

// placementNote says where things run when that differs from the obvious:
// with a hosted control plane everything, the webhook included, runs on the
// hosted cluster's workers.
func placementNote(c cluster) string {
	if c.ControlPlaneTopology == configv1.ExternalTopologyMode {
		return "; the control plane is hosted (External), so the handler and the webhook both run on this cluster's worker nodes"
	}
	return ""
}

// policyCount is "1 NodeNetworkConfigurationPolicy" or "n ...Policies".
func policyCount(n int) string {
	if n == 1 {
		return "1 NodeNetworkConfigurationPolicy"
	}
	return fmt.Sprintf("%d NodeNetworkConfigurationPolicies", n)
}
