package nmstate

import (
	"errors"
	"fmt"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types on network.operator.openshift.io/cluster. The prefix keeps
// them apart from CNO's own Available/Progressing/Degraded.
const (
	ConditionAvailable   = "KubernetesNMStateAvailable"
	ConditionProgressing = "KubernetesNMStateProgressing"
	ConditionDegraded    = "KubernetesNMStateDegraded"
)

// Status reasons beyond the decision reasons.
const (
	ReasonAsExpected     = "AsExpected"
	ReasonDeploying      = "Deploying"
	ReasonRollingOut     = "RollingOut"
	ReasonRolloutHung    = "RolloutHung"
	ReasonRemoving       = "Removing"
	ReasonNoHandlerNodes = "NoHandlerNodes"
	ReasonKeptDeployed   = "KeptDeployed"
)

// RolloutHungAfter is how long Progressing may stay True before it is also
// reported as Degraded.
const RolloutHungAfter = 15 * time.Minute

// Observed is what the caller read from the cluster: only the two workload
// objects' status, so the cost of a status update is the same on 3 nodes as
// on 3,000.
type Observed struct {
	Handler *appsv1.DaemonSet  // nil when absent
	Webhook *appsv1.Deployment // nil when absent
	// Policies is how many NodeNetworkConfigurationPolicies exist, for the
	// message when disabled; negative when unknown.
	Policies int
	// Previous are the conditions currently on the Network status; they keep
	// LastTransitionTime stable and time a hung rollout.
	Previous []operv1.OperatorCondition
	Now      time.Time
}

// Conditions turns a decision (or the error that stopped one) and the observed
// workloads into the three KubernetesNMState* conditions.
func Conditions(d Decision, err error, o Observed) []operv1.OperatorCondition {
	r := observeRollout(o)
	var available, progressing, degraded operv1.OperatorCondition
	switch {
	case err != nil:
		reason := ReasonOf(err)
		// An input error stops before any write; an API error may come after
		// some applies, but never before a deletion.
		msg := fmt.Sprintf("%v; retrying, and nothing was deleted", err)
		var inputErr *Error
		if errors.As(err, &inputErr) {
			msg = fmt.Sprintf("%v; nothing on the cluster was changed", err)
		}
		degraded = cond(ConditionDegraded, operv1.ConditionTrue, reason, msg)
		progressing = cond(ConditionProgressing, operv1.ConditionFalse, reason, msg)
		if r.present && r.available {
			available = cond(ConditionAvailable, operv1.ConditionTrue, ReasonKeptDeployed,
				"kubernetes-nmstate keeps running as last deployed until the problem is fixed: "+r.summary)
		} else {
			available = cond(ConditionAvailable, operv1.ConditionFalse, reason, msg)
		}

	case !d.Enabled:
		msg := keptMessage(o.Policies) + d.Message
		degraded = cond(ConditionDegraded, operv1.ConditionFalse, d.Reason, msg)
		available = cond(ConditionAvailable, operv1.ConditionFalse, d.Reason, msg)
		if o.Handler != nil || o.Webhook != nil {
			progressing = cond(ConditionProgressing, operv1.ConditionTrue, ReasonRemoving,
				"removing the kubernetes-nmstate handler and webhook; "+msg)
		} else {
			progressing = cond(ConditionProgressing, operv1.ConditionFalse, d.Reason, msg)
		}

	default:
		msg := d.Message + "; " + r.summary
		degraded = cond(ConditionDegraded, operv1.ConditionFalse, ReasonAsExpected, msg)
		switch {
		case r.noNodes:
			degraded = cond(ConditionDegraded, operv1.ConditionTrue, ReasonNoHandlerNodes,
				"no node matches the handler's node selector, so no policy can be applied; check spec.kubernetesNMState.handlerPlacement: "+r.summary)
			progressing = cond(ConditionProgressing, operv1.ConditionFalse, ReasonNoHandlerNodes, r.summary)
			available = cond(ConditionAvailable, operv1.ConditionFalse, ReasonNoHandlerNodes, msg)
		case r.progressing:
			reason := ReasonRollingOut
			if !r.present {
				reason = ReasonDeploying
			}
			progressing = cond(ConditionProgressing, operv1.ConditionTrue, reason, r.summary)
			if since, hung := hungSince(o); hung {
				degraded = cond(ConditionDegraded, operv1.ConditionTrue, ReasonRolloutHung,
					fmt.Sprintf("the kubernetes-nmstate rollout has not finished in %s: %s; check the pods with: oc -n %s get pods -l app=kubernetes-nmstate",
						o.Now.Sub(since).Round(time.Minute), r.summary, Namespace))
			}
		default:
			progressing = cond(ConditionProgressing, operv1.ConditionFalse, ReasonAsExpected, r.summary)
		}
		switch {
		case r.noNodes:
		case r.present && r.available:
			available = cond(ConditionAvailable, operv1.ConditionTrue, d.Reason, msg)
		default:
			available = cond(ConditionAvailable, operv1.ConditionFalse, ReasonDeploying, msg)
		}
	}

	out := []operv1.OperatorCondition{available, progressing, degraded}
	for i := range out {
		out[i].LastTransitionTime = transitionTime(out[i], o)
	}
	return out
}

type rollout struct {
	present     bool // both workloads exist
	available   bool // policies are enforced: some handler pod available
	progressing bool
	noNodes     bool
	summary     string
}

func observeRollout(o Observed) rollout {
	if o.Handler == nil || o.Webhook == nil {
		missing := "handler DaemonSet and webhook Deployment"
		if o.Handler != nil {
			missing = "webhook Deployment"
		} else if o.Webhook != nil {
			missing = "handler DaemonSet"
		}
		return rollout{progressing: true, summary: fmt.Sprintf("waiting for the %s to be created in %s", missing, Namespace)}
	}
	h, w := o.Handler, o.Webhook
	r := rollout{present: true}

	hs := h.Status
	handlerSeen := hs.ObservedGeneration >= h.Generation
	handlerDone := handlerSeen && hs.UpdatedNumberScheduled >= hs.DesiredNumberScheduled &&
		hs.NumberAvailable >= hs.DesiredNumberScheduled
	var handler string
	switch {
	case !handlerSeen:
		handler = "handler DaemonSet not yet picked up by its controller"
	case hs.UpdatedNumberScheduled < hs.DesiredNumberScheduled:
		handler = fmt.Sprintf("handler updated on %d of %d nodes, ready on %d", hs.UpdatedNumberScheduled, hs.DesiredNumberScheduled, hs.NumberAvailable)
	default:
		handler = fmt.Sprintf("handler ready on %d of %d nodes", hs.NumberAvailable, hs.DesiredNumberScheduled)
	}
	r.noNodes = handlerSeen && hs.DesiredNumberScheduled == 0

	ws := w.Status
	want := int32(1)
	if w.Spec.Replicas != nil {
		want = *w.Spec.Replicas
	}
	webhookSeen := ws.ObservedGeneration >= w.Generation
	webhookDone := webhookSeen && ws.UpdatedReplicas >= want && ws.AvailableReplicas >= want
	webhook := fmt.Sprintf("webhook %d of %d replicas available", ws.AvailableReplicas, want)
	if !webhookSeen {
		webhook = "webhook Deployment not yet picked up by its controller"
	}

	r.progressing = !handlerDone || !webhookDone
	// Policies are enforced by the handlers; the webhook only stamps them
	// and fails open (and rolls out with Recreate, upstream's strategy), so
	// a webhook rollout shows in Progressing, not in Available.
	r.available = hs.NumberAvailable > 0
	r.summary = handler + "; " + webhook
	return r
}

func keptMessage(policies int) string {
	switch {
	case policies < 0:
		return ""
	case policies == 1:
		return "1 NodeNetworkConfigurationPolicy was kept; "
	default:
		return fmt.Sprintf("%d NodeNetworkConfigurationPolicies were kept; ", policies)
	}
}

// hungSince reports when the current rollout started, if that is longer ago
// than RolloutHungAfter.
func hungSince(o Observed) (time.Time, bool) {
	prev := find(o.Previous, ConditionProgressing)
	if prev == nil || prev.Status != operv1.ConditionTrue || o.Now.IsZero() {
		return time.Time{}, false
	}
	since := prev.LastTransitionTime.Time
	return since, o.Now.Sub(since) > RolloutHungAfter
}

// transitionTime keeps the previous LastTransitionTime while the status does
// not change, as every Kubernetes condition does.
func transitionTime(c operv1.OperatorCondition, o Observed) metav1.Time {
	if prev := find(o.Previous, c.Type); prev != nil && prev.Status == c.Status && !prev.LastTransitionTime.IsZero() {
		return prev.LastTransitionTime
	}
	return metav1.NewTime(o.Now.Truncate(time.Second))
}

func find(conds []operv1.OperatorCondition, t string) *operv1.OperatorCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func cond(t string, s operv1.ConditionStatus, reason, msg string) operv1.OperatorCondition {
	return operv1.OperatorCondition{Type: t, Status: s, Reason: reason, Message: msg}
}
