package nmstate

import operv1 "github.com/openshift/api/operator/v1"

// Condition types on network.operator.openshift.io/cluster. The prefix keeps
// them apart from CNO's own Available/Progressing/Degraded.
const (
	ConditionAvailable   = "KubernetesNMStateAvailable"
	ConditionProgressing = "KubernetesNMStateProgressing"
	ConditionDegraded    = "KubernetesNMStateDegraded"
)

// Reasons are API: SREs alert and search on them, so they never change.
// Every reason any of the three conditions gives is declared here.

// Reasons of the decision, which Available gives.
const (
	ReasonPlatformDefault    = "PlatformDefault"
	ReasonPlatformNotDefault = "PlatformNotDefault"
	ReasonUserEnabled        = "UserEnabled"
	ReasonUserDisabled       = "UserDisabled"
	// ReasonManagedElsewhere: another manager deploys kubernetes-nmstate
	// (the standalone operator, OpenShift Virtualization's network addons
	// operator, a DaemonSet made by hand); the message names it.
	ReasonManagedElsewhere        = "ManagedElsewhere"
	ReasonDefaultGateOff          = "DefaultGateOff"
	ReasonKeptForExistingPolicies = "KeptForExistingPolicies"
)

// Reasons of an error that stopped the decision or the sync.
const (
	// Input problems: reported as Degraded, nothing deployed is changed.
	ReasonInvalidConfig = "InvalidConfig"
	ReasonMissingImage  = "MissingImage"
	// ReasonFailed is any other error, e.g. the API server refusing an apply.
	ReasonFailed = "Failed"
)

// Reasons of what the workloads show, and of a failure within its grace.
const (
	ReasonAsExpected  = "AsExpected"
	ReasonDeploying   = "Deploying"
	ReasonRollingOut  = "RollingOut"
	ReasonRolloutHung = "RolloutHung"
	// ReasonRemovalHung: the workloads, or their last pods, have not gone
	// in RolloutHungAfter since the decision turned off (a finalizer holds
	// them, say); the message names what holds them.
	ReasonRemovalHung    = "RemovalHung"
	ReasonRemoving       = "Removing"
	ReasonNoHandlerNodes = "NoHandlerNodes"
	ReasonKeptDeployed   = "KeptDeployed"
	ReasonRetrying       = "Retrying"
	// ReasonOtherHandlerNotRunning: the plugin defers to another manager's
	// handler DaemonSet that runs on no node, so nobody enforces policies.
	ReasonOtherHandlerNotRunning = "OtherHandlerNotRunning"
	// ReasonOtherManagerNotRunning: what looks like the standalone operator
	// runs nothing (its Deployment is scaled to 0 or has had no available
	// replica for RolloutHungAfter, or an NMState CR has no operator at
	// all), so the plugin did not step aside for it; the message names it
	// and how to remove it.
	ReasonOtherManagerNotRunning = "OtherManagerNotRunning"
)

// find is the condition of type t in conds, nil when there is none.
func find(conds []operv1.OperatorCondition, t string) *operv1.OperatorCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
