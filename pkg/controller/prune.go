package controller

import (
	"context"
	"errors"
	"fmt"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// prunable lists every kind the bindata may render, with the Go type the
// cache watches it as. Objects of these kinds that carry nmstate.OwnerLabel
// and are no longer rendered are deleted, except the kept kinds below and
// what nmstate.KeptOnDisable names (the admission policy, its binding and
// the cluster-reader ClusterRole).
var prunable = []client.Object{
	&corev1.ServiceAccount{}, &corev1.Service{},
	&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}, &rbacv1.Role{}, &rbacv1.RoleBinding{},
	&appsv1.DaemonSet{}, &appsv1.Deployment{}, &policyv1.PodDisruptionBudget{},
	&admissionregv1.MutatingWebhookConfiguration{},
	&admissionregv1.ValidatingAdmissionPolicy{}, &admissionregv1.ValidatingAdmissionPolicyBinding{},
	&networkingv1.NetworkPolicy{},
	metadataOnly(MonitoringGroupVersion.WithKind("ServiceMonitor")),
	metadataOnly(MonitoringGroupVersion.WithKind("PrometheusRule")),
}

// MonitoringGroupVersion is prometheus-operator's API, whose CRDs OpenShift's
// cluster-monitoring operator installs. Its kinds have no Go type here (the
// library would have to import prometheus-operator's module, which CNO does
// not): the host applies them unstructured and watches their metadata only,
// which is all that skipping an unchanged apply and pruning read.
var MonitoringGroupVersion = schema.GroupVersion{Group: "monitoring.coreos.com", Version: "v1"}

func metadataOnly(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// kept are rendered but never deleted: the CRDs hold users' policies, and
// the namespace may hold things that are not ours (the standalone operator
// installs into it by default).
var kept = []client.Object{&apiextensionsv1.CustomResourceDefinition{}, &corev1.Namespace{}}

// OwnedTypes are the Go types of every kind the bindata may render: what the
// host watches, and where to look for objects carrying nmstate.OwnerLabel.
func OwnedTypes() []client.Object {
	return append(append([]client.Object{}, prunable...), kept...)
}

// prune deletes objects with the owner label that were not rendered this
// time, as nmstate.DecidePrune says (CNO's status manager decides with it
// too): kept kinds are never deleted, nor is anything another controller
// has adopted (a controller reference): the standalone operator uses the
// same names; nor, while workloadsRemain, any service account or RBAC their
// pods may run under. It runs only after every apply succeeded.
func (r *Reconciler) prune(ctx context.Context, rendered []*unstructured.Unstructured, workloadsRemain bool) error {
	want := map[string]bool{}
	for _, obj := range rendered {
		want[identity(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName())] = true
	}
	owned, _ := labels.NewRequirement(nmstate.OwnerLabel, selection.Exists, nil)
	selector := labels.NewSelector().Add(*owned)
	var errs []error // one failed delete must not hold up the others
	var pruned, released []string
	for _, proto := range prunable {
		gvk, err := r.client.GroupVersionKindFor(proto)
		if err != nil {
			return err
		}
		// The list reads the informer the watch already keeps.
		list, err := r.listFor(proto, gvk)
		if err != nil {
			return err
		}
		if err := r.client.List(ctx, list, client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return fmt.Errorf("listing %s to prune: %w", gvk.Kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, o := range items {
			item := o.(client.Object)
			if want[identity(gvk.GroupKind(), item.GetNamespace(), item.GetName())] {
				continue
			}
			// The host sets no owner references: any controller is another.
			switch nmstate.DecidePrune(nmstate.Unrendered{Group: gvk.Group, Kind: gvk.Kind, Name: item.GetName(), Live: item, WorkloadsRemain: workloadsRemain}) {
			case nmstate.PruneAdopted:
				if err := r.release(ctx, gvk, item); err != nil {
					errs = append(errs, err)
				} else {
					released = append(released, gvk.Kind+" "+objectName(item))
				}
				continue
			case nmstate.PruneKeep, nmstate.PruneLater:
				continue
			}
			// Deleted only as it was decided on: an object recreated or
			// adopted since the read is refused (409), and decided again.
			uid, rv := item.GetUID(), item.GetResourceVersion()
			switch err := r.client.Delete(ctx, item, client.PropagationPolicy(metav1.DeletePropagationBackground),
				client.Preconditions{UID: &uid, ResourceVersion: &rv}); {
			case err == nil:
				pruned = append(pruned, gvk.Kind+" "+objectName(item))
			case !apierrors.IsNotFound(err): // gone already: the cache lags a delete
				errs = append(errs, fmt.Errorf("pruning %s %s: %w", gvk.Kind, objectName(item), err))
			}
		}
	}
	if len(pruned) > 0 {
		log.FromContext(ctx).Info("pruned what is no longer rendered", "count", len(pruned), "objects", pruned)
	}
	if len(released) > 0 {
		log.FromContext(ctx).Info("released what another controller adopted", "count", len(released), "objects", released)
	}
	return errors.Join(errs...)
}

// listFor is an empty list of gvk's kind, of the type the watch of proto
// keeps: typed, or metadata only.
func (r *Reconciler) listFor(proto client.Object, gvk schema.GroupVersionKind) (client.ObjectList, error) {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, ok := proto.(*metav1.PartialObjectMetadata); ok {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(listGVK)
		return list, nil
	}
	obj, err := r.client.Scheme().New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("no list type for %s: %w", gvk.Kind, err)
	}
	return obj.(client.ObjectList), nil
}

// release gives up the host's fields of an object another controller has
// adopted (the standalone operator takes over same-named objects): an empty
// server-side apply under the host's field manager removes what only the
// host set, its owner label among them, and keeps every field the adopter
// applied too. Without it the adopted object would keep the host's label
// (and with it, in CNO, a place in CNO's status) and stale fields such as
// the host's extra env and volumes. Upstream's operator applies server-side
// (controllers/operator/nmstate_controller.go, client.Apply with
// ForceOwnership), so a field both set is co-owned and stays.
func (r *Reconciler) release(ctx context.Context, gvk schema.GroupVersionKind, item client.Object) error {
	empty := &unstructured.Unstructured{}
	empty.SetGroupVersionKind(gvk)
	empty.SetNamespace(item.GetNamespace())
	empty.SetName(item.GetName())
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(empty), client.FieldOwner(FieldManager)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s %s, adopted by another controller: %w", gvk.Kind, objectName(item), err)
	}
	return nil
}
