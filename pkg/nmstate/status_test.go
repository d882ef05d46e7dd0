package nmstate

import (
	"errors"
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func handler(generation, observed int64, desired, updated, available int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: HandlerDaemonSet, Generation: generation},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: desired,
			UpdatedNumberScheduled: updated, NumberAvailable: available, NumberReady: available},
	}
}

func webhook(replicas, updated, available int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookDeployment, Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: updated, AvailableReplicas: available},
	}
}

type want struct {
	status  operv1.ConditionStatus
	reason  string
	message []string
}

func TestConditions(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	enabled := decide(Config{}, haCluster)
	disabled := decide(Config{Mode: ModeDisabled}, haCluster)
	notDefault := decide(Config{}, cluster{Platform: "AWS", ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "HighlyAvailable", DefaultOnGate: true})
	progressingSince := func(d time.Duration) []operv1.OperatorCondition {
		return []operv1.OperatorCondition{{Type: ConditionProgressing, Status: operv1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-d))}}
	}
	keptForPolicies := decide(Config{}, cluster{Platform: "AWS", ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "HighlyAvailable",
		DefaultOnGate: true, Deployed: true, Policies: 4})
	other := cluster{Platform: "BareMetal", ControlPlaneTopology: "HighlyAvailable", InfrastructureTopology: "HighlyAvailable", DefaultOnGate: true,
		ManagedBy: "whoever deployed DaemonSet openshift-cnv/nmstate-handler", OtherHandler: "openshift-cnv/nmstate-handler"}
	managedByOther := decide(Config{}, other)
	otherDS := func(generation, observed int64, desired, available int32) *appsv1.DaemonSet {
		ds := handler(generation, observed, desired, desired, available)
		ds.Namespace = "openshift-cnv"
		return ds
	}
	held := handler(1, 1, 6, 6, 6)
	held.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
	held.Finalizers = []string{"example.com/cleanup"}
	operatorDown := func(replicas int32, downFor time.Duration) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "nmstate-operator"},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas},
			Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
				LastTransitionTime: metav1.NewTime(now.Add(-downFor))}}}}
	}
	running := func() Observed {
		return Observed{WorkloadsKnown: true, Handler: handler(1, 1, 5, 5, 5), Webhook: webhook(2, 2, 2), Now: now}
	}
	with := func(o Observed, f func(*Observed)) Observed { f(&o); return o }
	badConfig := &InputError{Reason: ReasonInvalidConfig, Err: errors.New(`spec.kubernetesNMState.mode is "enabled"`)}

	tests := []struct {
		name                            string
		decision                        Decision
		err                             error
		observed                        Observed
		available, progressing, degrade want
	}{
		{name: "disabled by the user, policies kept", decision: disabled, observed: Observed{WorkloadsKnown: true, Policies: 3},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, []string{"3 NodeNetworkConfigurationPolicies exist and are not enforced", `"mode":"Enabled"`}},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "one policy kept", decision: disabled, observed: Observed{WorkloadsKnown: true, Policies: 1},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, []string{"1 NodeNetworkConfigurationPolicy exists and is not enforced"}},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "off by platform default is not Degraded", decision: notDefault, observed: Observed{WorkloadsKnown: true, Policies: -1},
			available:   want{operv1.ConditionFalse, ReasonPlatformNotDefault, []string{"off by default on AWS", "Enabled"}},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "disabled while the workloads are still there", decision: disabled,
			observed:    Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, nil},
			progressing: want{operv1.ConditionTrue, ReasonRemoving, []string{"removing the kubernetes-nmstate handler and webhook", "accounts and RBAC go once their pods are gone"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "disabled, the workloads gone since the sync read them, their pods not counted", decision: disabled, observed: Observed{WorkloadsKnown: true, Pods: -1},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, nil},
			progressing: want{operv1.ConditionTrue, ReasonRemoving, []string{"accounts and RBAC go once their pods are gone"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "disabled, the workloads gone, some of their pods not yet", decision: disabled, observed: Observed{WorkloadsKnown: true, Pods: 2},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, nil},
			progressing: want{operv1.ConditionTrue, ReasonRemoving, []string{"waiting for 2 pods", "oc -n openshift-nmstate get pods -l app=kubernetes-nmstate"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "enabled, nothing created yet", decision: enabled, observed: Observed{WorkloadsKnown: true},
			available:   want{operv1.ConditionFalse, ReasonDeploying, []string{"waiting for the handler DaemonSet and webhook Deployment"}},
			progressing: want{operv1.ConditionTrue, ReasonDeploying, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "DaemonSet controller has not seen it", decision: enabled, observed: Observed{WorkloadsKnown: true, Handler: handler(1, 0, 0, 0, 0), Webhook: webhook(2, 0, 0)},
			available:   want{operv1.ConditionFalse, ReasonDeploying, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, []string{"not yet picked up"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "rolling out", decision: enabled, observed: Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, []string{"handler ready on 3 of 5 nodes", "webhook 2 of 2"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "updating", decision: enabled, observed: Observed{WorkloadsKnown: true, Handler: handler(3, 3, 5, 2, 4), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, []string{"handler updated on 2 of 5 nodes, ready on 4"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "ready", decision: enabled, observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 5, 5, 5), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, []string{"on by default on BareMetal"}},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, []string{"handler ready on 5 of 5 nodes"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "webhook down", decision: enabled, observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 5, 5, 5), Webhook: webhook(2, 2, 0)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, []string{"webhook 0 of 2 replicas available"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "rolling out for a while is not yet hung", decision: enabled,
			observed:    Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Previous: progressingSince(5 * time.Minute), Now: now},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "hung", decision: enabled,
			observed:    Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Previous: progressingSince(40 * time.Minute), Now: now},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionTrue, ReasonRolloutHung, []string{"has not finished in over 15m0s, since 2026-12-02T11:20:00Z", "handler ready on 3 of 5 nodes", "oc -n openshift-nmstate get pods"}}},
		{name: "disabled, the handler held by a finalizer: it still runs, and Progressing says what holds it", decision: disabled,
			observed:    Observed{WorkloadsKnown: true, Handler: held, Pods: -1, Policies: 2, Previous: progressingSince(5 * time.Minute), Now: now},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, []string{"the kubernetes-nmstate handler still runs on 6 nodes until its DaemonSet is removed; kubernetes-nmstate is disabled"}},
			progressing: want{operv1.ConditionTrue, ReasonRemoving, []string{`daemonset nmstate-handler is held by finalizers "example.com/cleanup"`}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "disabled, the handler held by a finalizer for over 15 minutes", decision: disabled,
			observed:    Observed{WorkloadsKnown: true, Handler: held, Pods: -1, Policies: 2, Previous: progressingSince(16 * time.Minute), Now: now},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, nil},
			progressing: want{operv1.ConditionTrue, ReasonRemoving, nil},
			degrade: want{operv1.ConditionTrue, ReasonRemovalHung, []string{"has lasted over 15m0s, since 2026-12-02T11:44:00Z", "held by finalizers",
				`oc -n openshift-nmstate patch daemonset nmstate-handler --type=merge -p '{"metadata":{"finalizers":null}}'`}}},
		{name: "disabled, pods left for over 15 minutes", decision: disabled,
			observed:    Observed{WorkloadsKnown: true, Pods: 2, Previous: progressingSince(16 * time.Minute), Now: now},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, nil},
			progressing: want{operv1.ConditionTrue, ReasonRemoving, nil},
			degrade:     want{operv1.ConditionTrue, ReasonRemovalHung, []string{"2 pods of the removed workloads have not ended"}}},
		{name: "no node matches the selector", decision: enabled, observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 0, 0, 0), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionFalse, ReasonNoHandlerNodes, nil},
			progressing: want{operv1.ConditionFalse, ReasonNoHandlerNodes, nil},
			degrade:     want{operv1.ConditionTrue, ReasonNoHandlerNodes, []string{"handlerPlacement"}}},
		{name: "invalid config keeps what runs", err: badConfig, observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionTrue, ReasonKeptDeployed, []string{"keeps running as last deployed"}},
			progressing: want{operv1.ConditionFalse, ReasonInvalidConfig, []string{"KubernetesNMStateDegraded"}},
			degrade:     want{operv1.ConditionTrue, ReasonInvalidConfig, []string{`"enabled"`, "nothing on the cluster was changed"}}},
		{name: "invalid config, nothing deployed", err: badConfig, observed: Observed{WorkloadsKnown: true},
			available:   want{operv1.ConditionFalse, ReasonInvalidConfig, nil},
			progressing: want{operv1.ConditionFalse, ReasonInvalidConfig, nil},
			degrade:     want{operv1.ConditionTrue, ReasonInvalidConfig, nil}},
		{name: "API error", err: errors.New("connection refused"), observed: Observed{WorkloadsKnown: true},
			available:   want{operv1.ConditionFalse, ReasonFailed, nil},
			progressing: want{operv1.ConditionFalse, ReasonFailed, nil},
			degrade:     want{operv1.ConditionTrue, ReasonFailed, []string{"connection refused", "nothing was deleted"}}},
		{name: "API error retried: what is observed stays true", decision: enabled, err: errors.New("connection refused"),
			observed:    Observed{WorkloadsKnown: true, Handler: handler(1, 1, 5, 5, 5), Webhook: webhook(2, 2, 2), Retrying: true},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRetrying, []string{"retrying after: connection refused", "handler ready on 5 of 5 nodes"}},
			degrade:     want{operv1.ConditionFalse, ReasonRetrying, []string{"reported here if it persists"}}},
		{name: "workloads gone while retrying are not rolling out", decision: enabled, err: errors.New(`namespaces "openshift-nmstate" not found`),
			observed:    Observed{WorkloadsKnown: true, Retrying: true},
			available:   want{operv1.ConditionFalse, ReasonDeploying, []string{"waiting for the handler DaemonSet and webhook Deployment to be created"}},
			progressing: want{operv1.ConditionTrue, ReasonRetrying, []string{"not found", "waiting for the handler DaemonSet and webhook Deployment to be created"}},
			degrade:     want{operv1.ConditionFalse, ReasonRetrying, nil}},
		{name: "retrying before a decision", err: errors.New("reading infrastructure/cluster: connection refused"),
			observed:    Observed{WorkloadsKnown: true, Handler: handler(1, 1, 5, 5, 5), Webhook: webhook(2, 2, 2), Retrying: true},
			available:   want{operv1.ConditionTrue, ReasonKeptDeployed, nil},
			progressing: want{operv1.ConditionTrue, ReasonRetrying, nil},
			degrade:     want{operv1.ConditionFalse, ReasonRetrying, nil}},
		{name: "retrying before a decision, nothing running", err: errors.New("connection refused"), observed: Observed{WorkloadsKnown: true, Retrying: true},
			available:   want{operv1.ConditionFalse, ReasonRetrying, []string{"no kubernetes-nmstate handler is available"}},
			progressing: want{operv1.ConditionTrue, ReasonRetrying, nil},
			degrade:     want{operv1.ConditionFalse, ReasonRetrying, nil}},
		{name: "another manager's handler runs", decision: managedByOther, observed: Observed{WorkloadsKnown: true, Policies: 2, OtherHandler: otherDS(1, 1, 3, 3)},
			available:   want{operv1.ConditionFalse, ReasonManagedElsewhere, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "another manager's handler still starting is no fault", decision: managedByOther, observed: Observed{WorkloadsKnown: true, Policies: 2, OtherHandler: otherDS(1, 1, 3, 0)},
			available:   want{operv1.ConditionFalse, ReasonManagedElsewhere, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "another manager's handler not yet seen by its controller", decision: managedByOther, observed: Observed{WorkloadsKnown: true, Policies: 2, OtherHandler: otherDS(2, 1, 0, 0)},
			available:   want{operv1.ConditionFalse, ReasonManagedElsewhere, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "another manager's handler on no node: nobody enforces the policies", decision: managedByOther,
			observed:    Observed{WorkloadsKnown: true, Policies: 2, OtherHandler: otherDS(1, 1, 0, 0)},
			available:   want{operv1.ConditionFalse, ReasonManagedElsewhere, []string{"DaemonSet openshift-cnv/nmstate-handler runs on no node, so nobody runs a kubernetes-nmstate handler and 2 NodeNetworkConfigurationPolicies exist and are not enforced; "}},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionTrue, ReasonOtherHandlerNotRunning, []string{"runs on no node", "fix its node selector and tolerations, or remove it"}}},
		{name: "the operator scaled to 0 and its CR left: ours runs, and Degraded names both", decision: enabled,
			observed:    with(running(), func(o *Observed) { o.OtherOperator, o.LeftCR = operatorDown(0, time.Minute), "nmstate" }),
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade: want{operv1.ConditionTrue, ReasonOtherManagerNotRunning, []string{"operator Deployment openshift-nmstate/nmstate-operator is scaled to 0 and NMState CR nmstate has no running operator",
				"does not defer to it", "make the operator available to hand over, or uninstall it and run: oc delete nmstates nmstate"}}},
		{name: "the operator down past the grace", decision: enabled,
			observed:    with(running(), func(o *Observed) { o.OtherOperator = operatorDown(1, RolloutHungAfter+time.Minute) }),
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionTrue, ReasonOtherManagerNotRunning, []string{"operator Deployment openshift-nmstate/nmstate-operator has been down since 2026-12-02T11:44:00Z"}}},
		{name: "the operator starting, with its CR, is no fault", decision: enabled,
			observed:    with(running(), func(o *Observed) { o.OtherOperator, o.LeftCR = operatorDown(1, time.Minute), "nmstate" }),
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "an NMState CR left with no operator, while disabled", decision: disabled,
			observed:    Observed{WorkloadsKnown: true, LeftCR: "nmstate", Now: now},
			available:   want{operv1.ConditionFalse, ReasonUserDisabled, nil},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionTrue, ReasonOtherManagerNotRunning, []string{"NMState CR nmstate has no running operator", "to remove the CR run: oc delete nmstates nmstate"}}},
		{name: "a hung rollout comes before an idle operator", decision: enabled,
			observed: Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Now: now,
				Previous: progressingSince(RolloutHungAfter + time.Minute), OtherOperator: operatorDown(0, time.Minute)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionTrue, ReasonRolloutHung, nil}},
		{name: "kept for existing policies", decision: keptForPolicies, observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 5, 5, 5), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionTrue, ReasonKeptForExistingPolicies, []string{"4 NodeNetworkConfigurationPolicies would otherwise no longer be enforced"}},
			progressing: want{operv1.ConditionFalse, ReasonAsExpected, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conds := conditionsFor(tt.decision, tt.err, tt.observed)
			require.Len(t, conds, 3)
			for _, c := range []struct {
				typ  string
				want want
			}{{ConditionAvailable, tt.available}, {ConditionProgressing, tt.progressing}, {ConditionDegraded, tt.degrade}} {
				got := find(conds, c.typ)
				require.NotNil(t, got, c.typ)
				assert.Equal(t, c.want.status, got.Status, "%s: %s", c.typ, got.Message)
				assert.Equal(t, c.want.reason, got.Reason, "%s: %s", c.typ, got.Message)
				for _, s := range c.want.message {
					assert.Contains(t, got.Message, s, c.typ)
				}
				// The decision is said once, on Available; the others stay short.
				if c.typ == ConditionAvailable {
					assert.Contains(t, got.Message, tt.decision.Message)
				} else {
					assert.LessOrEqual(t, len(got.Message), 300, "%s: %s", c.typ, got.Message)
					if tt.decision.Message != "" {
						assert.NotContains(t, got.Message, tt.decision.Message, c.typ)
					}
				}
				// A condition that is as expected needs no words, but a
				// rollout's summary when there is one.
				quiet := c.want.reason == ReasonAsExpected && c.want.status == operv1.ConditionFalse &&
					(c.typ == ConditionDegraded || !tt.decision.Enabled)
				assert.Equal(t, quiet, got.Message == "", "%s message %q", c.typ, got.Message)
			}
		})
	}
}

func TestConditionsKeepTransitionTime(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	d := decide(Config{}, haCluster)
	first := conditionsFor(d, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 1, 1), Webhook: webhook(2, 2, 2), Now: t0})
	later := conditionsFor(d, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 2, 2), Webhook: webhook(2, 2, 2), Previous: first, Now: t0.Add(time.Minute)})
	assert.Equal(t, t0, find(later, ConditionProgressing).LastTransitionTime.Time, "status unchanged: time kept")
	done := conditionsFor(d, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Previous: later, Now: t0.Add(2 * time.Minute)})
	assert.Equal(t, t0.Add(2*time.Minute), find(done, ConditionProgressing).LastTransitionTime.Time, "status changed: new time")
	assert.Equal(t, t0, find(done, ConditionAvailable).LastTransitionTime.Time)
}
