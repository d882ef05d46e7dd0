package nmstate

import (
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// State is what pkg/clusterstate's Read finds on the cluster: the deployed
// workloads, whoever else deploys kubernetes-nmstate, and the policies. CNO's
// Bootstrap and the host both read it and pass it to Render as it is.
type State struct {
	// Other is whoever else deploys kubernetes-nmstate.
	Other Other
	// Handler and Webhook are the DaemonSet openshift-nmstate/nmstate-handler
	// and the Deployment openshift-nmstate/nmstate-webhook, nil when absent.
	// The handler may be another manager's that took the name over
	// (OwnHandler tells).
	Handler *appsv1.DaemonSet
	Webhook *appsv1.Deployment
	// WorkloadsKnown is false when the workloads could not be read: the
	// conditions then keep saying what they said, since nil workloads would
	// read as "not created" while the handler runs.
	WorkloadsKnown bool
	// Policies is how many NodeNetworkConfigurationPolicies exist (0 when
	// their CRD is not served); negative when unknown.
	Policies int
	// Installed is whether the plugin's own policies CRD exists: it
	// deployed kubernetes-nmstate here before.
	Installed bool
	// HandlerOn is whether that CRD carries HandlerOnAnnotation: the last
	// decision the plugin carried out ran the handler, whatever has failed
	// or been deleted since.
	HandlerOn bool
	// Pods is how many pods of the plugin's workloads (label
	// app=kubernetes-nmstate in Namespace) still exist once the handler
	// DaemonSet and the webhook Deployment are both gone: their service
	// accounts and RBAC stay until none is left. Counted only then, and
	// only where the plugin was installed (0 where it was not); -1 when a
	// workload was there, so they were not counted.
	Pods int
	// Accounts are the workloads and their ServiceAccounts as stampAccounts
	// reads them; read only where the plugin was installed, since none
	// exists elsewhere.
	Accounts Accounts
	// Err joins every read that failed. Render then renders nothing, so
	// that what is deployed stays as it is.
	Err error
}

// Other is whoever else deploys kubernetes-nmstate; the zero value is
// nobody. Only one handler may run per node, so the plugin then deploys
// nothing.
type Other struct {
	// ManagedBy names it for the Available message, e.g. "the standalone
	// kubernetes-nmstate operator (NMState CR nmstate)".
	ManagedBy string
	// StandaloneCR is the standalone operator's NMState CR, read whole: its
	// spec is what a handover carries into the Network. Nil when ManagedBy
	// names something else, or one of several CRs (the operator keeps the
	// oldest and deletes the others, so that does not last).
	StandaloneCR *unstructured.Unstructured
	// HandlerName is the namespace/name of another manager's handler
	// DaemonSet, when that is what was found rather than the standalone
	// operator: the way to hand over is then its manager's, not an OLM
	// uninstall. Handler is that DaemonSet, read whole for whether it runs
	// any pod; nil if it went between the list and the read.
	HandlerName string
	Handler     *appsv1.DaemonSet
	// Operator and LeftCR are what looks like the standalone operator but
	// does not run, when ManagedBy is empty: its Deployment (label
	// app=kubernetes-nmstate-operator) with no available replica, and the
	// name of an NMState CR that nothing reconciles. They do not defer the
	// plugin; the conditions name them once they are not merely starting
	// (otherManagerIdle).
	Operator *appsv1.Deployment
	LeftCR   string
}

// WorkloadsRemain reports whether anything of the workloads may still run
// under the plugin's service accounts: the handler DaemonSet or the webhook
// Deployment exists (whoever controls it now, deleted or not), or pods of
// them do. While they do, no account or RBAC of theirs is pruned
// (Unrendered.WorkloadsRemain): a running pod whose account is deleted has
// its token refused, and one recreated under the same name has a new UID,
// which the token does not name.
func (s State) WorkloadsRemain() bool {
	return s.Handler != nil || s.Webhook != nil || s.Pods != 0
}

// removing reports whether the plugin's own workloads are going: they are
// there and not deleted yet (a sync that does not run them deletes them),
// or their last pods end. Another manager's workloads, and ones a finalizer
// holds, end when someone else acts, which a consumer sees by its watches.
func (s State) removing() bool {
	pending := func(o metav1.Object) bool { return ownedByPlugin(o) && o.GetDeletionTimestamp() == nil }
	return s.Pods > 0 || (s.Handler != nil && pending(s.Handler)) || (s.Webhook != nil && pending(s.Webhook))
}

// RemovalRecheck is Result.RecheckAfter while the last pods of removed
// workloads end.
const RemovalRecheck = 10 * time.Second

// Observed is the state as the Reporter reads it, with the Network's
// conditions now, previous.
func (s State) Observed(previous []operv1.OperatorCondition, now time.Time) Observed {
	return Observed{
		Handler:        s.Handler,
		Webhook:        s.Webhook,
		Pods:           s.Pods,
		WorkloadsKnown: s.WorkloadsKnown,
		Policies:       s.Policies,
		OtherHandler:   s.Other.Handler,
		OtherOperator:  s.Other.Operator,
		LeftCR:         s.Other.LeftCR,
		Previous:       previous,
		Now:            now,
	}
}

// OwnHandler tells the plugin's own handler DaemonSet from any other: its
// name in its namespace, unless another controller controls it. The
// standalone operator deploys its handler under the same name with a
// controller reference to its NMState CR (and one that adopted the
// plugin's handler sets one too); CNO's is to network.operator/cluster and
// the host sets none. The owner label is not asked for: removed by hand, it
// is back with the next apply, and taking the plugin's own handler for
// another's would prune its account and RBAC from under its running pods.
func OwnHandler(ds metav1.Object) bool {
	return ds.GetNamespace() == Namespace && ds.GetName() == HandlerDaemonSet && ownedByPlugin(ds)
}

// ownedByPlugin reports whether no controller but the consumer's (CNO's
// reference to network.operator/cluster, or none from the host) controls
// o: the standalone operator takes its objects over under the same names.
func ownedByPlugin(o metav1.Object) bool {
	owner := metav1.GetControllerOf(o)
	return owner == nil || IsOperatorConfig(*owner)
}
