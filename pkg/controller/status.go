package controller

import (
	"context"
	"fmt"

	operv1 "github.com/openshift/api/operator/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/clusterstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// observe is what the conditions report after a sync: the workloads read
// again from the cache, since the sync may have applied them, and the rest
// as Read found it.
func (r *Reconciler) observe(ctx context.Context, network *unstructured.Unstructured, state nmstate.State) (nmstate.Observed, error) {
	err := clusterstate.ReadWorkloads(ctx, r.client, &state)
	return state.Observed(nmstate.NetworkConditions(network), r.opts.Now()), err
}

// liveConditions are the Network's conditions as the API server holds them.
func (r *Reconciler) liveConditions(ctx context.Context) ([]operv1.OperatorCondition, error) {
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	if err := r.reader.Get(ctx, client.ObjectKey{Name: clusterName}, network); err != nil {
		return nil, fmt.Errorf("reading network.operator/cluster: %w", err)
	}
	return nmstate.NetworkConditions(network), nil
}

// writeStatus applies the three conditions under StatusFieldManager, and
// only when one of them differs from previous, so an idle cluster sees no
// writes.
func (r *Reconciler) writeStatus(ctx context.Context, previous, conditions []operv1.OperatorCondition) error {
	if conditionsUnchanged(previous, conditions) {
		return nil
	}
	items := make([]any, 0, len(conditions))
	for _, c := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		if err != nil {
			return fmt.Errorf("encoding condition %s: %w", c.Type, err)
		}
		items = append(items, m)
	}
	patch := &unstructured.Unstructured{}
	patch.SetGroupVersionKind(NetworkGVK)
	patch.SetName(clusterName)
	if err := unstructured.SetNestedSlice(patch.Object, items, "status", "conditions"); err != nil {
		return err
	}
	if err := r.client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(StatusFieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the KubernetesNMState conditions: %w", err)
	}
	logChanges(ctx, previous, conditions)
	return nil
}

func conditionsUnchanged(previous, next []operv1.OperatorCondition) bool {
	for _, n := range next {
		p := findCondition(previous, n.Type)
		if p == nil || p.Status != n.Status || p.Reason != n.Reason || p.Message != n.Message ||
			!p.LastTransitionTime.Equal(&n.LastTransitionTime) {
			return false
		}
	}
	return true
}

// findCondition is the condition of type typ in conds, nil when there is
// none (condition types are unique: the list is a map keyed by type).
func findCondition(conds []operv1.OperatorCondition, typ string) *operv1.OperatorCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
