// Package controller hosts the nmstate plugin the way CNO runs it: read the
// Network operator config and the Infrastructure, Decide, Render, apply with
// server-side apply, prune what is no longer rendered, and write the
// KubernetesNMState* conditions. It is for development, demos and the
// end-to-end tests; CNO wires pkg/nmstate into its own controllers instead.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	// FieldManager owns every rendered object, so CNO's other field managers
	// and users' own fields are left alone.
	FieldManager = "cluster-network-operator/kubernetes-nmstate"
	// StatusFieldManager owns only the three KubernetesNMState* conditions on
	// the Network status; CNO's status manager owns the rest.
	StatusFieldManager = "cluster-network-operator/kubernetes-nmstate-status"

	clusterName = "cluster"
)

var (
	NetworkGVK    = schema.GroupVersionKind{Group: "operator.openshift.io", Version: "v1", Kind: "Network"}
	nncpListGVK   = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NodeNetworkConfigurationPolicyList"}
	clusterReq    = reconcile.Request{NamespacedName: client.ObjectKey{Name: clusterName}}
	enqueueSingle = handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{clusterReq}
	})
)

// prunable lists every kind the bindata may render, with the Go type the
// cache watches it as. Objects of these kinds that carry nmstate.OwnerLabel
// and are no longer rendered are deleted, except the kept kinds below and
// what nmstate.KeptOnDisable names (the admission policy and its binding).
var prunable = []client.Object{
	&corev1.ServiceAccount{}, &corev1.Service{},
	&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}, &rbacv1.Role{}, &rbacv1.RoleBinding{},
	&appsv1.DaemonSet{}, &appsv1.Deployment{}, &policyv1.PodDisruptionBudget{},
	&admissionregv1.MutatingWebhookConfiguration{},
	&admissionregv1.ValidatingAdmissionPolicy{}, &admissionregv1.ValidatingAdmissionPolicyBinding{},
	&networkingv1.NetworkPolicy{},
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

// Options configure the host.
type Options struct {
	// ManifestDir is the bindata root holding network/kubernetes-nmstate.
	ManifestDir string
	// Params builds the render parameters; nmstate.ParamsFromEnv by default.
	Params func(nmstate.Config, nmstate.Cluster) nmstate.RenderParams
	// DefaultOnGate stands in for the KubernetesNMStateByDefault feature gate.
	DefaultOnGate bool
	// RecheckInterval is how often the host looks again without an event
	// (reads only; it writes nothing when nothing changed): the standalone
	// operator's signals are not watched (its NMState CRD may not exist, its
	// Deployment may be in any namespace), and a rollout that stopped moving
	// must still turn into RolloutHung. 30 seconds by default.
	RecheckInterval time.Duration
	// Now is the clock for condition times; time.Now by default.
	Now func() time.Time
	// FailureGrace is how long API errors are retried before they are
	// reported as Degraded (reason Failed); 2 minutes by default, as in
	// CNO's status manager. Input errors are reported at once.
	FailureGrace time.Duration
	// ApplyEveryReconcile applies every rendered object on every reconcile,
	// as CNO's apply does; the benchmarks use it as the baseline.
	ApplyEveryReconcile bool
}

// Reconciler is the host's single reconcile loop: every event maps to the
// one Network object "cluster".
type Reconciler struct {
	client client.Client
	reader client.Reader // uncached, for what must never fill the cache
	opts   Options

	mu           sync.Mutex
	applied      map[string]appliedState // what this host last applied, by object
	failingSince time.Time               // start of the current run of failed syncs
}

// NewScheme has every type the host reads or writes.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, configv1.Install, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the scheme: %w", err)
		}
	}
	return s, nil
}

// CacheOptions keeps the cache to what the host owns: the two singletons,
// the operands' namespace and objects with the owner label. Nodes, pods,
// NodeNetworkStates and policies are never cached, so memory does not grow
// with the cluster.
func CacheOptions() cache.Options {
	owned, _ := labels.NewRequirement(nmstate.OwnerLabel, selection.Exists, nil)
	byName := fields.OneTermEqualSelector("metadata.name", clusterName)
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	// An explicit label selector: without one the default below applies.
	all := labels.Everything()
	operands := map[string]cache.Config{nmstate.Namespace: {LabelSelector: all}}
	return cache.Options{
		DefaultLabelSelector: labels.NewSelector().Add(*owned),
		ByObject: map[client.Object]cache.ByObject{
			network:                    {Field: byName, Label: all},
			&configv1.Infrastructure{}: {Field: byName, Label: all},
			&appsv1.DaemonSet{}:        {Namespaces: operands, Label: all},
			&appsv1.Deployment{}:       {Namespaces: operands, Label: all},
		},
	}
}

// NewManager returns a controller-runtime manager set up for the host.
// Leader election is the caller's to set in opts: CNO runs the plugin under
// its own lock, `cno-nmstate run` under a Lease of its own. The lock reads
// and writes its Lease with a client of its own, never through the cache,
// which holds nothing but the host's objects.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	opts.Scheme = scheme
	opts.Cache = CacheOptions()
	// Read the Network (unstructured, to see fields the vendored type may
	// lack) from the cache too; controller-runtime reads unstructured objects
	// from the API server by default.
	opts.Client.Cache = &client.CacheOptions{Unstructured: true}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, nil
}

// Setup registers the host's controller with mgr.
func Setup(mgr ctrl.Manager, opts Options) (*Reconciler, error) {
	if opts.ManifestDir == "" {
		return nil, errors.New("ManifestDir is required")
	}
	if opts.Params == nil {
		opts.Params = nmstate.ParamsFromEnv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FailureGrace == 0 {
		opts.FailureGrace = 2 * time.Minute
	}
	if opts.RecheckInterval == 0 {
		opts.RecheckInterval = 30 * time.Second
	}
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, applied: map[string]appliedState{}}

	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("kubernetes-nmstate").
		For(network, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == clusterName }))).
		Watches(&configv1.Infrastructure{}, enqueueSingle)
	for _, obj := range OwnedTypes() {
		b = b.Watches(obj, enqueueSingle)
	}
	// Retries back off from 100ms to at most 2s: controller-runtime's
	// default grows to 1000s, which leaves the host idle for many minutes
	// after a burst of API errors.
	b = b.WithOptions(crcontroller.TypedOptions[reconcile.Request]{RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, 2*time.Second),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)})
	if err := b.Complete(r); err != nil {
		return nil, fmt.Errorf("setting up the controller: %w", err)
	}
	return r, nil
}

// Reconcile brings the cluster to what Decide says and reports it.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	if err := r.client.Get(ctx, client.ObjectKey{Name: clusterName}, network); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil // nothing to configure, nothing to report on
		}
		return reconcile.Result{}, fmt.Errorf("reading network.operator/cluster: %w", err)
	}

	decision, syncErr := r.sync(ctx, network)
	var inputErr *nmstate.Error
	badInput := errors.As(syncErr, &inputErr)
	if syncErr == nil {
		r.mu.Lock()
		r.failingSince = time.Time{}
		r.mu.Unlock()
	}
	observed, obsErr := r.observe(ctx, network, decision)
	// A conflict or an unavailable API server is retried with backoff and
	// reported as Degraded only if it persists, as CNO's MaybeSetDegraded
	// does; meanwhile the conditions still say what is observed.
	observed.Retrying = syncErr != nil && !badInput && !r.failingTooLong()
	conditions := nmstate.Conditions(decision, syncErr, observed)
	if !conditionsUnchanged(observed.Previous, conditions) {
		// The cache may not hold this host's last write yet: conditions
		// computed from it would write that again, with a new transition
		// time. Whether they change is decided on what the server holds.
		live, err := r.liveConditions(ctx)
		if err != nil {
			return reconcile.Result{}, errors.Join(syncErr, err)
		}
		observed.Previous = live
		conditions = nmstate.Conditions(decision, syncErr, observed)
	}
	if err := r.writeStatus(ctx, observed.Previous, conditions); err != nil {
		return reconcile.Result{}, errors.Join(syncErr, err)
	}
	switch {
	case badInput:
		// A bad input is fixed by an edit, which the watches see: no retry.
		return reconcile.Result{}, nil
	case syncErr != nil || obsErr != nil:
		return reconcile.Result{}, errors.Join(syncErr, obsErr)
	}
	return reconcile.Result{RequeueAfter: r.opts.RecheckInterval}, nil
}

// failingTooLong records the first of a run of failed syncs and reports
// whether the run has lasted longer than Options.FailureGrace.
func (r *Reconciler) failingTooLong() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	if r.failingSince.IsZero() {
		r.failingSince = now
	}
	return now.Sub(r.failingSince) >= r.opts.FailureGrace
}

// sync decides, renders, applies and prunes. On any input error it returns
// before touching the cluster.
func (r *Reconciler) sync(ctx context.Context, network *unstructured.Unstructured) (nmstate.Decision, error) {
	cfg, err := nmstate.ConfigFromNetwork(network)
	if err != nil {
		return nmstate.Decision{}, err
	}
	infra := &configv1.Infrastructure{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: clusterName}, infra); err != nil {
		if !apierrors.IsNotFound(err) {
			return nmstate.Decision{}, fmt.Errorf("reading infrastructure/cluster: %w", err)
		}
		infra = nil
	}
	cluster := nmstate.ClusterFromInfrastructure(infra)
	cluster.DefaultOnGate = r.opts.DefaultOnGate
	if cluster.ManagedBy, err = OtherManager(ctx, r.reader); err != nil {
		return nmstate.Decision{}, err
	}

	decision := nmstate.Decide(cfg, cluster)
	if nmstate.DependsOnPolicies(cfg, decision) {
		if cluster.Deployed, cluster.Policies, err = r.keptInputs(ctx); err != nil {
			return decision, err
		}
		decision = nmstate.Decide(cfg, cluster)
	}
	objs, err := nmstate.Render(decision, r.opts.Params(cfg, cluster), r.opts.ManifestDir)
	if err != nil {
		return decision, err
	}
	// Apply everything even when one object fails, so each retry makes
	// progress on all of them; prune only once every apply has succeeded.
	var errs []error
	for _, obj := range objs {
		if err := r.apply(ctx, obj); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return decision, errors.Join(errs...)
	}
	return decision, r.prune(ctx, objs)
}

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

// cachedResourceVersion reads obj's kind through the typed informer the
// watches keep, or "" when it does not exist.
func (r *Reconciler) cachedResourceVersion(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	typed, err := r.client.Scheme().New(obj.GroupVersionKind())
	if err != nil {
		return "", fmt.Errorf("no Go type for %s: %w", obj.GetKind(), err)
	}
	live := typed.(client.Object)
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	return live.GetResourceVersion(), nil
}

// prune deletes objects with the owner label that were not rendered this
// time. Kept kinds are never deleted, nor is anything another controller has
// adopted (an owner reference): the standalone operator uses the same names.
func (r *Reconciler) prune(ctx context.Context, rendered []*unstructured.Unstructured) error {
	want := map[string]bool{}
	for _, obj := range rendered {
		want[identity(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName())] = true
	}
	owned, _ := labels.NewRequirement(nmstate.OwnerLabel, selection.Exists, nil)
	selector := labels.NewSelector().Add(*owned)
	var errs []error // one failed delete must not hold up the others
	for _, proto := range prunable {
		gvk, err := r.client.GroupVersionKindFor(proto)
		if err != nil {
			return err
		}
		// The typed list reads the informer the watch already keeps.
		obj, err := r.client.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			return fmt.Errorf("no list type for %s: %w", gvk.Kind, err)
		}
		list := obj.(client.ObjectList)
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
			if len(item.GetOwnerReferences()) > 0 {
				if err := r.release(ctx, gvk, item); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if nmstate.KeptOnDisable(gvk.Group, gvk.Kind, item.GetName()) {
				continue
			}
			if err := r.client.Delete(ctx, item, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("pruning %s %s: %w", gvk.Kind, objectName(item), err))
			}
		}
	}
	return errors.Join(errs...)
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

// observe reads the two workloads' status and, when disabled, counts the kept
// policies (metadata only, uncached).
func (r *Reconciler) observe(ctx context.Context, network *unstructured.Unstructured, d nmstate.Decision) (nmstate.Observed, error) {
	o := nmstate.Observed{Policies: -1, Now: r.opts.Now(), Previous: NetworkConditions(network)}
	ds := &appsv1.DaemonSet{}
	switch err := r.client.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); {
	case err == nil:
		o.Handler = ds
	case !apierrors.IsNotFound(err):
		return o, fmt.Errorf("reading the handler DaemonSet: %w", err)
	}
	dep := &appsv1.Deployment{}
	switch err := r.client.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.WebhookDeployment}, dep); {
	case err == nil:
		o.Webhook = dep
	case !apierrors.IsNotFound(err):
		return o, fmt.Errorf("reading the webhook Deployment: %w", err)
	}
	if !d.Enabled && d.Reason != nmstate.ReasonManagedByStandaloneOperator {
		var err error
		if o.Policies, err = r.countPolicies(ctx); err != nil {
			return o, err
		}
	}
	return o, nil
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

func identity(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

func objectName(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
