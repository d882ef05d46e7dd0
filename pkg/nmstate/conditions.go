package nmstate

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
	ReasonPlatformDefault             = "PlatformDefault"
	ReasonPlatformNotDefault          = "PlatformNotDefault"
	ReasonUserEnabled                 = "UserEnabled"
	ReasonUserDisabled                = "UserDisabled"
	ReasonManagedByStandaloneOperator = "ManagedByStandaloneOperator"
	ReasonDefaultGateOff              = "DefaultGateOff"
	ReasonKeptForExistingPolicies     = "KeptForExistingPolicies"
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
	ReasonAsExpected     = "AsExpected"
	ReasonDeploying      = "Deploying"
	ReasonRollingOut     = "RollingOut"
	ReasonRolloutHung    = "RolloutHung"
	ReasonRemoving       = "Removing"
	ReasonNoHandlerNodes = "NoHandlerNodes"
	ReasonKeptDeployed   = "KeptDeployed"
	ReasonRetrying       = "Retrying"
	// ReasonOtherHandlerNotRunning: the plugin defers to another manager's
	// handler DaemonSet that runs on no node, so nobody enforces policies.
	ReasonOtherHandlerNotRunning = "OtherHandlerNotRunning"
)
