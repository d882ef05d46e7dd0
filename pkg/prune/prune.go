package prune

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Options are what tells one consumer's Prune from another's.
type Options struct {
	// FieldManager is the consumer's server-side apply field manager: an
	// object another controller adopted is released from it (an empty
	// apply under it gives up its fields). The host sets it; CNO leaves it
	// empty and keeps an adopted object as it is, marks and all.
	FieldManager string
	// OwnController is nmstate.Unrendered.OwnController: nil for the host,
	// which sets no controller references, nmstate.IsOperatorConfig for CNO.
	OwnController func(metav1.OwnerReference) bool
}

// Prune deletes the objects with the owner label that were not rendered
// this time, as nmstate.DecidePrune says: kept kinds are never deleted, nor
// is anything another controller has adopted (a controller reference): the
// standalone operator uses the same names; nor, while workloadsRemain, any
// service account or RBAC their pods may run under. Call it only after
// every rendered object was applied. c lists from wherever the consumer
// reads: the host's cache, or the API server for CNO. pending is true when
// an object was kept only for now (nmstate.PruneLater): a later pass must
// look at it again.
func Prune(ctx context.Context, c client.Client, rendered []*unstructured.Unstructured, workloadsRemain bool, opts Options) (pending bool, err error) {
	want := map[key]bool{}
	for _, obj := range rendered {
		want[key{obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName()}] = true
	}
	owned, _ := labels.NewRequirement(nmstate.OwnerLabel, selection.Exists, nil)
	selector := labels.NewSelector().Add(*owned)
	var errs []error // one failed delete must not hold up the others
	var pruned, released []string
	for _, proto := range prunable {
		gvk, err := c.GroupVersionKindFor(proto)
		if err != nil {
			return false, err
		}
		list, err := listFor(c, proto, gvk)
		if err != nil {
			return false, err
		}
		if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: selector}); err != nil {
			if meta.IsNoMatchError(err) {
				continue // the kind is not served (no monitoring stack): nothing of it was deployed
			}
			return false, fmt.Errorf("listing %s to prune: %w", gvk.Kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return false, err
		}
		for _, o := range items {
			item := o.(client.Object)
			if want[key{gvk.GroupKind(), item.GetNamespace(), item.GetName()}] {
				continue
			}
			switch nmstate.DecidePrune(nmstate.Unrendered{Group: gvk.Group, Kind: gvk.Kind, Live: item,
				WorkloadsRemain: workloadsRemain, OwnController: opts.OwnController}) {
			case nmstate.PruneAdopted:
				if opts.FieldManager == "" {
					continue
				}
				if err := release(ctx, c, gvk, item, opts.FieldManager); err != nil {
					errs = append(errs, err)
				} else {
					released = append(released, gvk.Kind+" "+klog.KObj(item).String())
				}
				continue
			case nmstate.PruneLater:
				pending = true
				continue
			case nmstate.PruneKeep:
				continue
			}
			// Deleted only as it was decided on: an object recreated or
			// adopted since the read is refused (409), and decided again.
			uid, rv := item.GetUID(), item.GetResourceVersion()
			switch err := c.Delete(ctx, item, client.PropagationPolicy(metav1.DeletePropagationBackground),
				client.Preconditions{UID: &uid, ResourceVersion: &rv}); {
			case err == nil:
				pruned = append(pruned, gvk.Kind+" "+klog.KObj(item).String())
			case !apierrors.IsNotFound(err): // gone already: a cache lags a delete
				errs = append(errs, fmt.Errorf("pruning %s %s: %w", gvk.Kind, klog.KObj(item), err))
			}
		}
	}
	if len(pruned) > 0 {
		log.FromContext(ctx).Info("pruned what is no longer rendered", "count", len(pruned), "objects", pruned)
	}
	if len(released) > 0 {
		log.FromContext(ctx).Info("released what another controller adopted", "count", len(released), "objects", released)
	}
	return pending, errors.Join(errs...)
}

// key is an object's identity, its version aside.
type key struct {
	gk              schema.GroupKind
	namespace, name string
}

// listFor is an empty list of gvk's kind, of the type the watch of proto
// keeps: typed, or metadata only.
func listFor(c client.Client, proto client.Object, gvk schema.GroupVersionKind) (client.ObjectList, error) {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, ok := proto.(*metav1.PartialObjectMetadata); ok {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(listGVK)
		return list, nil
	}
	obj, err := c.Scheme().New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("no list type for %s: %w", gvk.Kind, err)
	}
	return obj.(client.ObjectList), nil
}

// release gives up fieldManager's fields of an object another controller
// has adopted (the standalone operator takes over same-named objects): an
// empty server-side apply under it removes what only that manager set, the
// owner label among them, and keeps every field the adopter applied too.
// Without it the adopted object would keep the host's label and stale
// fields such as the host's extra env and volumes. Upstream's operator
// applies server-side (controllers/operator/nmstate_controller.go,
// client.Apply with ForceOwnership), so a field both set is co-owned and
// stays.
func release(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, item client.Object, fieldManager string) error {
	empty := &unstructured.Unstructured{}
	empty.SetGroupVersionKind(gvk)
	empty.SetNamespace(item.GetNamespace())
	empty.SetName(item.GetName())
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(empty), client.FieldOwner(fieldManager)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s %s, adopted by another controller: %w", gvk.Kind, klog.KObj(item), err)
	}
	return nil
}
