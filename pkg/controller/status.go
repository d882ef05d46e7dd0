package controller

import (
	"context"
	"fmt"

	operv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// observe reads the two workloads' status and, when disabled, counts the kept
// policies (metadata only, uncached).
func (r *Reconciler) observe(ctx context.Context, network *unstructured.Unstructured, d nmstate.Decision) (nmstate.Observed, error) {
	o := nmstate.Observed{Policies: -1, Now: r.opts.Now(), Previous: NetworkConditions(network)}
	if err := readWorkloads(ctx, r.client, &o); err != nil {
		return o, err
	}
	if !d.Enabled && d.Reason != nmstate.ReasonManagedByStandaloneOperator {
		var err error
		if o.Policies, err = r.countPolicies(ctx); err != nil {
			return o, err
		}
	}
	return o, nil
}

// readWorkloads reads the handler DaemonSet and the webhook Deployment into
// o, nil when absent.
func readWorkloads(ctx context.Context, c client.Reader, o *nmstate.Observed) error {
	o.Handler, o.Webhook = nil, nil
	ds := &appsv1.DaemonSet{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); {
	case err == nil:
		o.Handler = ds
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the handler DaemonSet: %w", err)
	}
	dep := &appsv1.Deployment{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.WebhookDeployment}, dep); {
	case err == nil:
		o.Webhook = dep
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the webhook Deployment: %w", err)
	}
	return nil
}

// keptInputs reads what a default that is off depends on: whether this
// plugin's handler runs and, only then, how many policies it enforces.
func (r *Reconciler) keptInputs(ctx context.Context) (bool, int, error) {
	ds := &appsv1.DaemonSet{} // typed: the informer observe reads, not a second one
	switch err := r.client.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); {
	case apierrors.IsNotFound(err):
		return false, 0, nil
	case err != nil:
		return false, 0, fmt.Errorf("reading the handler DaemonSet: %w", err)
	}
	if _, ours := ds.GetLabels()[nmstate.OwnerLabel]; !ours {
		return false, 0, nil
	}
	policies, err := r.countPolicies(ctx)
	return true, policies, err
}

// countPolicies counts the NodeNetworkConfigurationPolicies (metadata only,
// uncached); -1 when their CRD is not served.
func (r *Reconciler) countPolicies(ctx context.Context) (int, error) {
	policies := &metav1.PartialObjectMetadataList{}
	policies.SetGroupVersionKind(nncpListGVK)
	switch err := r.reader.List(ctx, policies); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return -1, nil
	case err != nil:
		return -1, fmt.Errorf("counting NodeNetworkConfigurationPolicies: %w", err)
	}
	return len(policies.Items), nil
}

// NetworkConditions are the status conditions of a Network.operator read
// unstructured; entries that do not decode are skipped.
func NetworkConditions(network *unstructured.Unstructured) []operv1.OperatorCondition {
	raw, _, _ := unstructured.NestedSlice(network.Object, "status", "conditions")
	var out []operv1.OperatorCondition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c operv1.OperatorCondition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// liveConditions are the Network's conditions as the API server holds them.
func (r *Reconciler) liveConditions(ctx context.Context) ([]operv1.OperatorCondition, error) {
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	if err := r.reader.Get(ctx, client.ObjectKey{Name: clusterName}, network); err != nil {
		return nil, fmt.Errorf("reading network.operator/cluster: %w", err)
	}
	return NetworkConditions(network), nil
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
	return nil
}

func conditionsUnchanged(previous, next []operv1.OperatorCondition) bool {
	for _, n := range next {
		found := false
		for _, p := range previous {
			if p.Type == n.Type {
				found = p.Status == n.Status && p.Reason == n.Reason && p.Message == n.Message &&
					p.LastTransitionTime.Equal(&n.LastTransitionTime)
			}
		}
		if !found {
			return false
		}
	}
	return true
}
