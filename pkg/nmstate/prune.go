package nmstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PruneAction is what to do with an object the plugin deployed before and
// did not render this time.
type PruneAction int

const (
	// PruneDelete: the plugin's own object, no longer wanted.
	PruneDelete PruneAction = iota
	// PruneKeep: never deleted (KeptOnDisable names it), or not the
	// plugin's to delete (it lacks the owner label).
	PruneKeep
	// PruneLater: kept for now and looked at again on the next pass: a
	// service account or RBAC object while workloads remain.
	PruneLater
	// PruneAdopted: another controller took it over (the standalone
	// operator deploys under the same names); it is that controller's.
	PruneAdopted
)

func (a PruneAction) String() string {
	return [...]string{"delete", "keep", "keep until the workloads' pods are gone", "adopted by another controller"}[a]
}

// Unrendered is an object the plugin deployed before and did not render
// this time, as DecidePrune weighs it.
type Unrendered struct {
	Group, Kind string
	// Live is its metadata as the consumer listed it.
	Live metav1.Object
	// WorkloadsRemain is Result.WorkloadsRemain: a service account or RBAC
	// object waits until no workload or pod is left that may run under it.
	WorkloadsRemain bool
	// OwnController tells the consumer's own controller reference from
	// another's: CNO sets one to network.operator/cluster
	// (IsOperatorConfig); the host sets none. Nil: no reference is the
	// consumer's.
	OwnController func(metav1.OwnerReference) bool
}

// DecidePrune decides what becomes of u.
//
// Adoption comes first: a kept object another controller took over (the
// standalone operator renders a reader role of the same name) is that
// controller's too, and a consumer that marks what it applies (the host's
// labels and fields) releases it rather than keeping its marks on it.
func DecidePrune(u Unrendered) PruneAction {
	if owner := metav1.GetControllerOf(u.Live); owner != nil && (u.OwnController == nil || !u.OwnController(*owner)) {
		return PruneAdopted
	}
	_, owned := u.Live.GetLabels()[OwnerLabel]
	switch {
	case !owned, KeptOnDisable(u.Group, u.Kind, u.Live.GetName()):
		return PruneKeep
	case u.WorkloadsRemain && grantsAccess(u.Group, u.Kind):
		return PruneLater
	}
	return PruneDelete
}

// grantsAccess reports whether objects of the kind give the workloads' pods
// their identity or permissions: a service account, or RBAC.
func grantsAccess(group, kind string) bool {
	switch {
	case group == "" && kind == "ServiceAccount":
		return true
	case group == "rbac.authorization.k8s.io":
		return kind == "Role" || kind == "RoleBinding" || kind == "ClusterRole" || kind == "ClusterRoleBinding"
	}
	return false
}

// IsOperatorConfig reports whether ref is CNO's controller reference, to
// network.operator/cluster: CNO sets it on every object it applies, the
// host sets none. Any other controller took the object over.
func IsOperatorConfig(ref metav1.OwnerReference) bool {
	return ref.Kind == "Network" && ref.APIVersion == "operator.openshift.io/v1"
}
