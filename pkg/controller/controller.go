// Package controller hosts the nmstate plugin the way CNO runs it: read the
// Network operator config and the Infrastructure, Decide, Render, apply with
// server-side apply, prune what is no longer rendered, and write the
// KubernetesNMState* conditions. It is for development, demos and the
// end-to-end tests; CNO wires pkg/nmstate into its own controllers instead.
package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cno-nmstate/cno-nmstate/pkg/clusterstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/prune"
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
	clusterReq    = reconcile.Request{NamespacedName: client.ObjectKey{Name: clusterName}}
	enqueueSingle = handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{clusterReq}
	})
)

// Options configure the host.
type Options struct {
	// ManifestDir is the bindata root holding network/kubernetes-nmstate.
	ManifestDir string
	// Images are what the rendered workloads run: nmstate.ImagesFromEnv
	// for a host run as CNO would run it; an empty handler image is
	// reported as MissingImage.
	Images nmstate.Images
	// DefaultOnGate stands in for the KubernetesNMStateByDefault feature gate.
	DefaultOnGate bool
	// RecheckInterval is how often the host looks again without an event
	// (reads only; it writes nothing when nothing changed): another
	// manager's handler DaemonSet may be in any namespace, outside the
	// cache, and a rollout that stopped moving must still turn into
	// RolloutHung. The standalone operator is watched
	// (clusterstate.OperatorSource). 30 seconds by default.
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
	// resources reads the nmstate.io resources, which may not be served,
	// by their path (clusterstate.Readers).
	resources dynamic.Interface
	opts      Options

	mu      sync.Mutex
	applied map[string]appliedState // what this host last applied, by object
	report  nmstate.Reporter        // the conditions, with the failure grace
}

// A failed reconcile is retried after retryBase, doubled after each further
// failure up to retryMax: controller-runtime's default grows to 1000s,
// which leaves the host idle for many minutes after a burst of API errors.
// The Reporter says the same back-off in the conditions.
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 2 * time.Second
)

// Setup registers the host's controller with mgr.
func Setup(mgr ctrl.Manager, opts Options) (*Reconciler, error) {
	if opts.ManifestDir == "" {
		return nil, errors.New("ManifestDir is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FailureGrace == 0 {
		opts.FailureGrace = nmstate.DefaultFailureGrace
	}
	if opts.RecheckInterval == 0 {
		opts.RecheckInterval = 30 * time.Second
	}
	resources, err := dynamic.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("creating the client for the nmstate.io resources: %w", err)
	}
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), resources: resources, opts: opts,
		applied: map[string]appliedState{}, report: nmstate.Reporter{Grace: opts.FailureGrace, RetryBase: retryBase, RetryMax: retryMax}}

	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("kubernetes-nmstate").
		For(network, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == clusterName }))).
		Watches(&configv1.Infrastructure{}, enqueueSingle)
	for _, obj := range prune.OwnedTypes() {
		b = b.Watches(obj, enqueueSingle)
	}
	operator, err := clusterstate.OperatorSource(mgr.GetConfig(), enqueueSingle)
	if err != nil {
		return nil, err
	}
	b = b.WatchesRawSource(operator)
	b = b.WithOptions(crcontroller.TypedOptions[reconcile.Request]{RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](retryBase, retryMax),
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
	if manager, ok := embeddingCNO(network); ok {
		log.FromContext(ctx).Info("standing by: a Cluster Network Operator that embeds kubernetes-nmstate writes its conditions; this host writes nothing while it does",
			"fieldManager", manager)
		return reconcile.Result{RequeueAfter: r.opts.RecheckInterval}, nil
	}

	// The same bounded reads CNO's Bootstrap makes; the workloads come from
	// the cache, which holds them anyway.
	state := clusterstate.Read(ctx, clusterstate.Readers{Workloads: r.client, Live: r.reader, Resources: r.resources})
	res, syncErr := r.sync(ctx, network, state)
	var inputErr *nmstate.InputError
	badInput := errors.As(syncErr, &inputErr)
	observed, obsErr := r.observe(ctx, network, state)
	r.mu.Lock()
	conditions := r.report.Sync(res.Decision, syncErr, observed)
	r.mu.Unlock()
	if !conditionsUnchanged(observed.Previous, conditions) {
		// The cache may not hold this host's last write yet: conditions
		// computed from it would write that again, with a new transition
		// time. Whether they change is decided on what the server holds,
		// the workloads included: the cache may not hold what this sync
		// applied either, and after an API server restart or an etcd outage
		// it lags for seconds, while the informers list again
		// (TestFaultControlPlaneAPIServerRestart).
		live, err := r.liveConditions(ctx)
		if err == nil {
			err = clusterstate.ReadWorkloads(ctx, r.reader, &state)
		}
		if err != nil {
			return reconcile.Result{}, errors.Join(syncErr, err)
		}
		observed = state.Observed(live, observed.Now)
		r.mu.Lock()
		conditions, _ = r.report.Refresh(observed)
		r.mu.Unlock()
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
	if res.RecheckAfter > 0 {
		return reconcile.Result{RequeueAfter: min(r.opts.RecheckInterval, res.RecheckAfter)}, nil
	}
	return reconcile.Result{RequeueAfter: r.opts.RecheckInterval}, nil
}

// sync decides, renders, applies and prunes. On any input error or failed
// read it returns before touching the cluster.
func (r *Reconciler) sync(ctx context.Context, network *unstructured.Unstructured, state nmstate.State) (nmstate.Result, error) {
	infra := &configv1.Infrastructure{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: clusterName}, infra); err != nil {
		if !apierrors.IsNotFound(err) {
			return nmstate.Result{}, fmt.Errorf("reading infrastructure/cluster: %w", err)
		}
		infra = nil
	}
	res := nmstate.Render(nmstate.Input{Network: network, Infrastructure: nmstate.InfrastructureOf(infra), State: state,
		DefaultOnGate: r.opts.DefaultOnGate, Images: r.opts.Images, ManifestDir: r.opts.ManifestDir})
	if res.Err != nil {
		return res, res.Err
	}
	// Apply everything even when one object fails, so each retry makes
	// progress on all of them; prune only once every apply has succeeded.
	var errs []error
	for _, obj := range res.Objects {
		if err := r.apply(ctx, obj); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	// The host lists from its cache, which holds every object with the
	// owner label anyway: it prunes on every sync.
	_, err := prune.Prune(ctx, r.client, res.Objects, res.WorkloadsRemain, prune.Options{FieldManager: FieldManager})
	return res, err
}
