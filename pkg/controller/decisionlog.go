package controller

import (
	"context"

	operv1 "github.com/openshift/api/operator/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// logChanges logs each KubernetesNMState* condition whose status or reason
// differs from previous, once, as the host writes it: the decision and its
// reason (on, off, stepping aside and for whom, kept for policies), a
// rollout that starts or ends, and what is wrong (NoHandlerNodes, a failure).
// A condition whose message alone changes (a rollout's progress) is not
// logged again: the log says what was decided, the status how it goes.
func logChanges(ctx context.Context, previous, next []operv1.OperatorCondition) {
	logger := log.FromContext(ctx)
	for _, c := range next {
		if p := findCondition(previous, c.Type); p != nil && p.Status == c.Status && p.Reason == c.Reason {
			continue
		}
		logger.Info("kubernetes-nmstate condition changed", "type", c.Type, "status", c.Status, "reason", c.Reason, "message", c.Message)
	}
}
