package nmstate

import (
	"slices"
	"strings"

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
	// PruneLater: kept for now and looked at again on the next pass; the
	// plugin could not render this time, or the object could not be read.
	PruneLater
	// PruneAdopted: another controller took it over (the standalone
	// operator deploys under the same names); it is that controller's.
	PruneAdopted
)

func (a PruneAction) String() string {
	return [...]string{"delete", "keep", "keep until rendered again", "adopted by another controller"}[a]
}

// MayBeRendered reports whether an object of that group, kind, namespace and
// name could be one the plugin renders: everything namespaced is in
// Namespace but the handler's events Role and RoleBinding in "default"
// (upstream's handler records events there), and every cluster-scoped name
// starts with "nmstate" or "nncp-" or is an nmstate.io CRD (TestMayBeRenderedCoversEveryObject holds the
// templates to it). A consumer that prunes by a list of references, as CNO's
// status manager does, reads only these: the others are not the plugin's.
func MayBeRendered(group, kind, namespace, name string) bool {
	switch {
	case namespace != "":
		return namespace == Namespace || strings.HasPrefix(name, "nmstate")
	case group == "" && kind == "Namespace":
		return name == Namespace
	case group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition":
		return strings.HasSuffix(name, ".nmstate.io")
	}
	return strings.HasPrefix(name, "nmstate") || strings.HasPrefix(name, "nncp-")
}

// Unrendered is an object the plugin deployed before and did not render
// this time, as DecidePrune weighs it.
type Unrendered struct {
	Group, Kind, Name string
	// Live is its metadata as the API server holds it; nil when it is gone.
	Live metav1.Object
	// ReadFailed: the read of Live failed, so nil says nothing.
	ReadFailed bool
	// RenderFailed: the plugin could not render at all (bad input, a failed
	// read), so nothing it deployed may go.
	RenderFailed bool
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
	if u.Live != nil {
		if owner := metav1.GetControllerOf(u.Live); owner != nil && (u.OwnController == nil || !u.OwnController(*owner)) {
			return PruneAdopted
		}
	}
	if action, ok := PruneWithoutReading(u); ok {
		return action
	}
	if u.ReadFailed {
		return PruneLater
	}
	if u.Live == nil {
		return PruneDelete // already gone: nothing to lose
	}
	if _, owned := u.Live.GetLabels()[OwnerLabel]; !owned {
		return PruneKeep
	}
	return PruneDelete
}

// PruneWithoutReading is DecidePrune's answer when the object as the API
// server holds it cannot change it, for a consumer that keeps an adopted
// object as it keeps any other (CNO's status manager does): such a consumer
// then makes no read, and leaves u.Live unset. What KeptOnDisable names is
// kept, nothing goes while the plugin could not render, and a service
// account or RBAC object waits while workloads remain. ok is false when only
// the live object tells.
func PruneWithoutReading(u Unrendered) (action PruneAction, ok bool) {
	switch {
	case KeptOnDisable(u.Group, u.Kind, u.Name):
		return PruneKeep, true
	case u.RenderFailed, u.WorkloadsRemain && grantsAccess(u.Group, u.Kind):
		return PruneLater, true
	}
	return PruneDelete, false
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

// KeepOutOfRelatedObjects reports whether a consumer that prunes by its list
// of related objects (CNO's status manager) must leave this one out of that
// list: the nmstate.io CRDs, whose deletion deletes every user's policy.
// Such a consumer deletes whatever it listed before and no longer renders;
// a version of it that does not know kubernetes-nmstate (a downgrade to a
// CNO without it) would so delete the CRDs, and the policies with them.
// Unlisted, no version of the consumer ever deletes them. group and
// resource are an ObjectReference's (the plural resource, not the kind).
func KeepOutOfRelatedObjects(group, resource, name string) bool {
	return group == "apiextensions.k8s.io" && resource == "customresourcedefinitions" && slices.Contains(crdNames, name)
}
