package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/prune"
)

// apply server-side applies obj unless this host already applied exactly
// this content and nobody has changed the object since (same
// resourceVersion in the cache): an idle cluster sees no writes, and any
// edit, deletion or status change still leads to a re-apply.
func (r *Reconciler) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	key := identity(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName())
	hash, err := contentHash(obj)
	if err != nil {
		return err
	}
	if !r.opts.ApplyEveryReconcile {
		r.mu.Lock()
		last, ok := r.applied[key]
		r.mu.Unlock()
		if ok && last.hash == hash {
			rv, err := r.cachedResourceVersion(ctx, obj)
			if err != nil {
				return err
			}
			if rv == last.resourceVersion {
				return nil
			}
		}
	}
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	r.mu.Lock()
	r.applied[key] = appliedState{hash: hash, resourceVersion: obj.GetResourceVersion()}
	r.mu.Unlock()
	return nil
}

type appliedState struct{ hash, resourceVersion string }

func contentHash(obj *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("hashing %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// cachedResourceVersion reads obj through the informer the watches keep
// (typed, or metadata only for the kinds without a Go type), or "" when it
// does not exist.
func (r *Reconciler) cachedResourceVersion(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	var live client.Object
	if obj.GroupVersionKind().GroupVersion() == prune.MonitoringGroupVersion {
		live = prune.MetadataOnly(obj.GroupVersionKind())
	} else {
		typed, err := r.client.Scheme().New(obj.GroupVersionKind())
		if err != nil {
			return "", fmt.Errorf("no Go type for %s: %w", obj.GetKind(), err)
		}
		live = typed.(client.Object)
	}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	return live.GetResourceVersion(), nil
}

func identity(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

func objectName(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
