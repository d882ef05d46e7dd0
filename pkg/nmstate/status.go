package nmstate

import (
	"fmt"
	"strings"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Pods is State.Pods: the pods left of workloads already deleted, or
	// -1 when the workloads were there as the sync read them.
	Pods int
	// WorkloadsKnown is false when the workloads could not be read:
	// Available and Progressing then keep what they said, since nil
	// workloads would read as "not created" while the handler runs.
	WorkloadsKnown bool
	// Policies is how many NodeNetworkConfigurationPolicies exist, for the
	// message when disabled; negative when unknown.
	Policies int
	// OtherHandler is the other manager's handler DaemonSet the decision
	// defers to, when that is who manages kubernetes-nmstate; nil otherwise.
	OtherHandler *appsv1.DaemonSet
	// OtherOperator and LeftCR are Other.Operator and Other.LeftCR: what
	// looks like the standalone operator but does not run.
	OtherOperator *appsv1.Deployment
	LeftCR        string
	// Previous are the conditions currently on the Network status; they keep
	// LastTransitionTime stable and time a hung rollout.
	Previous []operv1.OperatorCondition
	Now      time.Time
	// Retrying is true while the error the Reporter was given is retried
	// within the caller's failure grace: it shows in Progressing, and in
	// Degraded only if it lasts, as CNO reports its own errors.
	Retrying bool
	// RetryAfter is when, after this sync, the Reporter's caller tries
	// again; zero when it does not.
	RetryAfter time.Duration
}

// conditionsFor turns a decision (or the error that stopped one) and the observed
// workloads into the three KubernetesNMState* conditions. Only Available
// states the decision; Progressing and Degraded say what moves and what is
// wrong.
func conditionsFor(d Decision, err error, o Observed) []operv1.OperatorCondition {
	r := observeRollout(o)
	var out []operv1.OperatorCondition
	if err == nil {
		out = steady(d, o, r)
		if idle, ok := otherManagerIdle(o); ok && out[2].Status == operv1.ConditionFalse {
			out[2] = cond(ConditionDegraded, operv1.ConditionTrue, ReasonOtherManagerNotRunning, idle)
		}
	} else if o.Retrying {
		out = retrying(d, err, o, r)
	} else {
		out = stopped(err, o, r)
	}
	if !o.WorkloadsKnown {
		out[0], out[1] = unknownRollout(out[0], o), unknownRollout(out[1], o)
	}
	for i := range out {
		out[i].LastTransitionTime = transitionTime(out[i], o)
	}
	return out
}

// unknownRollout is c when the workloads could not be read: what the
// Network said before, or Unknown when it said nothing yet.
func unknownRollout(c operv1.OperatorCondition, o Observed) operv1.OperatorCondition {
	if prev := find(o.Previous, c.Type); prev != nil {
		return cond(c.Type, prev.Status, prev.Reason, prev.Message)
	}
	return cond(c.Type, operv1.ConditionUnknown, ReasonRetrying, "the kubernetes-nmstate handler and webhook could not be read yet")
}

// retrying is the state while err is retried within the caller's grace:
// what is observed stays true, and the error is not Degraded yet.
func retrying(d Decision, err error, o Observed, r rollout) []operv1.OperatorCondition {
	available := lastDeployed(ReasonRetrying, r)
	if d.Reason != "" {
		available = steady(d, o, r)[0]
	}
	return []operv1.OperatorCondition{
		available,
		cond(ConditionProgressing, operv1.ConditionTrue, ReasonRetrying, retryingIn(o.RetryAfter)+" after: "+summarize(err)+"; "+r.summary),
		cond(ConditionDegraded, operv1.ConditionFalse, ReasonRetrying,
			"an error is being retried (see KubernetesNMStateProgressing); it is reported here if it persists"),
	}
}

// stopped is the state when err stopped the sync: nothing deployed is
// removed, so Available reports what still runs.
func stopped(err error, o Observed, r rollout) []operv1.OperatorCondition {
	reason := ReasonOf(err)
	// An input error stops before any write; an API error may come after
	// some applies, but never before a deletion.
	msg := summarize(err) + "; " + retryingIn(o.RetryAfter) + ", and nothing was deleted"
	if !retryable(err) {
		msg = summarize(err) + "; nothing on the cluster was changed"
	}
	return []operv1.OperatorCondition{
		lastDeployed(reason, r),
		cond(ConditionProgressing, operv1.ConditionFalse, reason, "nothing is rolled out until the problem in KubernetesNMStateDegraded is fixed"),
		cond(ConditionDegraded, operv1.ConditionTrue, reason, msg),
	}
}

// retryingIn says when the next try is, as a kubelet says its back-off:
// from the sync that wrote it.
func retryingIn(d time.Duration) string {
	if d == 0 {
		return "retrying"
	}
	return "retrying in " + d.String()
}

// lastDeployed is Available when no decision could be carried out: what
// was last deployed keeps running.
func lastDeployed(reason string, r rollout) operv1.OperatorCondition {
	if r.present && r.available {
		return cond(ConditionAvailable, operv1.ConditionTrue, ReasonKeptDeployed,
			"kubernetes-nmstate keeps running as last deployed until the problem is fixed: "+r.summary)
	}
	return cond(ConditionAvailable, operv1.ConditionFalse, reason, "no kubernetes-nmstate handler is available: "+r.summary)
}

// steady is the state the decision and the workloads show.
func steady(d Decision, o Observed, r rollout) []operv1.OperatorCondition {
	asExpected := cond(ConditionDegraded, operv1.ConditionFalse, ReasonAsExpected, "")
	if !d.Enabled {
		msg := d.Message
		degraded := asExpected
		if d.Reason != ReasonManagedElsewhere {
			msg = unenforced(o.Policies) + msg
			if running := stillRunning(o.Handler); running != "" {
				msg = running + d.Message
			}
		} else if idle, ok := otherHandlerIdle(o); ok {
			// Still aside: the other handler may be scheduled at any time,
			// and two handlers on a node must never run.
			msg = cut(idle+"; "+msg, maxMessage)
			degraded = cond(ConditionDegraded, operv1.ConditionTrue, ReasonOtherHandlerNotRunning, idle+
				"; fix its node selector and tolerations, or remove it so that the Cluster Network Operator deploys its own")
		}
		progressing := cond(ConditionProgressing, operv1.ConditionFalse, ReasonAsExpected, "")
		switch {
		case o.Handler != nil || o.Webhook != nil:
			msg := "removing the kubernetes-nmstate handler and webhook"
			if held, _ := heldBy(o); held != "" {
				msg += ": " + held
			}
			progressing = cond(ConditionProgressing, operv1.ConditionTrue, ReasonRemoving, cut(msg+"; their service accounts and RBAC go once their pods are gone", maxMessage))
		case o.Pods > 0:
			progressing = cond(ConditionProgressing, operv1.ConditionTrue, ReasonRemoving, fmt.Sprintf(
				"waiting for %s of the removed kubernetes-nmstate workloads to end: their service accounts and RBAC go once they are gone; see them with: oc -n %s get pods -l app=kubernetes-nmstate",
				podCount(o.Pods), Namespace))
		case o.Pods < 0:
			// Gone since the sync read them, which counted no pods.
			progressing = cond(ConditionProgressing, operv1.ConditionTrue, ReasonRemoving,
				"removing the kubernetes-nmstate handler and webhook; their service accounts and RBAC go once their pods are gone")
		}
		if since, hung := hungSince(o); hung && progressing.Reason == ReasonRemoving && d.Reason != ReasonManagedElsewhere {
			degraded = removalHung(o, since)
		}
		return []operv1.OperatorCondition{cond(ConditionAvailable, operv1.ConditionFalse, d.Reason, msg), progressing, degraded}
	}
	if r.noNodes {
		return []operv1.OperatorCondition{
			cond(ConditionAvailable, operv1.ConditionFalse, ReasonNoHandlerNodes, "no handler runs, so no policy is enforced; "+d.Message),
			cond(ConditionProgressing, operv1.ConditionFalse, ReasonNoHandlerNodes, r.summary),
			cond(ConditionDegraded, operv1.ConditionTrue, ReasonNoHandlerNodes,
				"no node matches the handler's node selector, so no policy can be applied; check spec.kubernetesNMState.handlerPlacement"),
		}
	}

	available := cond(ConditionAvailable, operv1.ConditionTrue, d.Reason, d.Message)
	if !r.present || !r.available {
		available = cond(ConditionAvailable, operv1.ConditionFalse, ReasonDeploying, "no handler is available yet, so policies are not enforced ("+r.summary+"); "+d.Message)
	}
	progressing := cond(ConditionProgressing, operv1.ConditionFalse, ReasonAsExpected, r.summary)
	degraded := asExpected
	if r.progressing {
		reason := ReasonRollingOut
		if !r.present {
			reason = ReasonDeploying
		}
		progressing = cond(ConditionProgressing, operv1.ConditionTrue, reason, r.summary)
		if since, hung := hungSince(o); hung {
			degraded = cond(ConditionDegraded, operv1.ConditionTrue, ReasonRolloutHung,
				// The start, not the time elapsed: a message that changed
				// every minute would be a status write every minute.
				fmt.Sprintf("the kubernetes-nmstate rollout has not finished in over %s, since %s: %s; check the pods with: oc -n %s get pods -l app=kubernetes-nmstate",
					RolloutHungAfter, since.UTC().Format(time.RFC3339), r.summary, Namespace))
		}
	}
	return []operv1.OperatorCondition{available, progressing, degraded}
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
	handler := fmt.Sprintf("handler ready on %d of %d nodes", hs.NumberAvailable, hs.DesiredNumberScheduled)
	if !handlerSeen {
		handler = "handler DaemonSet not yet picked up by its controller"
	} else if hs.UpdatedNumberScheduled < hs.DesiredNumberScheduled {
		handler = fmt.Sprintf("handler updated on %d of %d nodes, ready on %d", hs.UpdatedNumberScheduled, hs.DesiredNumberScheduled, hs.NumberAvailable)
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

// otherHandlerIdle says so when the other manager's handler DaemonSet runs
// on no node: its controller has seen it and schedules it nowhere (a node
// selector or tolerations that match no node). Pods still starting are a
// rollout, not this.
func otherHandlerIdle(o Observed) (string, bool) {
	ds := o.OtherHandler
	if ds == nil || ds.Status.ObservedGeneration < ds.Generation || ds.Status.DesiredNumberScheduled > 0 {
		return "", false
	}
	what := "no NodeNetworkConfigurationPolicy is enforced"
	if o.Policies > 0 {
		what = unenforcedCount(o.Policies)
	}
	return fmt.Sprintf("DaemonSet %s/%s runs on no node, so nobody runs a kubernetes-nmstate handler and %s", ds.Namespace, ds.Name, what), true
}

// otherManagerIdle says so when what looks like the standalone operator
// runs nothing and is not merely starting: its Deployment is scaled to 0 or
// has had no available replica for RolloutHungAfter, or an NMState CR has
// no operator Deployment at all. The decision did not step aside for it;
// the message says what it is and how to remove it, or to let it take over.
func otherManagerIdle(o Observed) (string, bool) {
	var what []string
	remove := ""
	if dep := o.OtherOperator; dep != nil {
		name := "operator Deployment " + dep.Namespace + "/" + dep.Name
		since := unavailableSince(dep)
		switch {
		case dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0:
			what = append(what, name+" is scaled to 0")
		case !o.Now.IsZero() && o.Now.Sub(since) > RolloutHungAfter:
			what = append(what, name+" has been down since "+since.UTC().Format(time.RFC3339))
		default:
			// Starting: it may take over at any moment.
			return "", false
		}
		remove = "make the operator available to hand over, or uninstall it"
	}
	if o.LeftCR != "" {
		what = append(what, "NMState CR "+o.LeftCR+" has no running operator")
		if remove == "" {
			remove = "to remove the CR run: oc delete nmstates " + o.LeftCR
		} else {
			remove += " and run: oc delete nmstates " + o.LeftCR
		}
	}
	if len(what) == 0 {
		return "", false
	}
	return cut(strings.Join(what, " and ")+", so the Cluster Network Operator does not defer to it; "+remove, maxMessage), true
}

// unavailableSince is when dep last turned unavailable: its Available
// condition's transition, or its creation if its controller has not said.
func unavailableSince(dep *appsv1.Deployment) time.Time {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse {
			return c.LastTransitionTime.Time
		}
	}
	return dep.CreationTimestamp.Time
}

// stillRunning says so when the handler DaemonSet being removed still
// serves from some node (a finalizer holds it, or its deletion has not been
// carried out yet): policies are then still enforced there.
func stillRunning(ds *appsv1.DaemonSet) string {
	if ds == nil || ds.Status.NumberAvailable == 0 {
		return ""
	}
	return fmt.Sprintf("the kubernetes-nmstate handler still runs on %d nodes until its DaemonSet is removed; ", ds.Status.NumberAvailable)
}

// heldBy names the workloads being deleted that finalizers keep, with
// their finalizers, and the command that lets the first of them go; empty
// when none is.
func heldBy(o Observed) (held, command string) {
	type workload struct {
		kind string
		obj  metav1.Object
	}
	var present []workload
	if o.Handler != nil {
		present = append(present, workload{"daemonset", o.Handler})
	}
	if o.Webhook != nil {
		present = append(present, workload{"deployment", o.Webhook})
	}
	var names []string
	for _, w := range present {
		if w.obj.GetDeletionTimestamp() == nil || len(w.obj.GetFinalizers()) == 0 {
			continue
		}
		names = append(names, fmt.Sprintf("%s %s is held by finalizers %s", w.kind, w.obj.GetName(), boundedName(strings.Join(w.obj.GetFinalizers(), ", "))))
		if command == "" {
			command = fmt.Sprintf("oc -n %s patch %s %s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'", Namespace, w.kind, w.obj.GetName())
		}
	}
	return strings.Join(names, "; "), command
}

// removalHung is Degraded once a removal has lasted RolloutHungAfter: what
// is left, and what to do about it.
func removalHung(o Observed, since time.Time) operv1.OperatorCondition {
	what := fmt.Sprintf("the handler DaemonSet or webhook Deployment is still there; check them with: oc -n %s get daemonset,deployment -o yaml", Namespace)
	if held, command := heldBy(o); held != "" {
		what = held + "; if nothing else removes them: " + command
	} else if o.Pods > 0 {
		what = fmt.Sprintf("%s of the removed workloads have not ended; see them with: oc -n %s get pods -l app=kubernetes-nmstate", podCount(o.Pods), Namespace)
	}
	return cond(ConditionDegraded, operv1.ConditionTrue, ReasonRemovalHung, cut(fmt.Sprintf(
		"the removal of kubernetes-nmstate has lasted over %s, since %s: %s", RolloutHungAfter, since.UTC().Format(time.RFC3339), what), maxMessage))
}

// podCount is "1 pod" or "n pods".
func podCount(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}

// unenforced says how many policies no handler enforces, when any do exist.
func unenforced(policies int) string {
	if policies <= 0 {
		return ""
	}
	return unenforcedCount(policies) + ", as no kubernetes-nmstate handler runs; "
}

// unenforcedCount is "n NodeNetworkConfigurationPolicies exist and are not
// enforced", or "1 ... exists and is ...".
func unenforcedCount(policies int) string {
	verb := "exist and are"
	if policies == 1 {
		verb = "exists and is"
	}
	return fmt.Sprintf("%s %s not enforced", policyCount(policies), verb)
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

func cond(t string, s operv1.ConditionStatus, reason, msg string) operv1.OperatorCondition {
	return operv1.OperatorCondition{Type: t, Status: s, Reason: reason, Message: msg}
}
