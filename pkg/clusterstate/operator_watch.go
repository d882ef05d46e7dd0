package clusterstate

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

var (
	deploymentsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crdsResource        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// nmstatesCRD is the standalone operator's CRD, which OLM installs with it.
const nmstatesCRD = "nmstates.nmstate.io"

// OperatorSource is a controller-runtime source that passes h an event
// whenever what OtherManager reads of the standalone operator changes: an
// NMState CR, or a Deployment labelled app=kubernetes-nmstate-operator (its
// availability included), is created, changed or deleted. A consumer that
// re-decides only on events and a slow resync (CNO, every 3 minutes) sees a
// takeover, or an operator scaled to 0, within seconds.
//
// It watches metadata only, each watch selected down to a few objects: the
// operator's Deployments by label; the NMState CRD by name, since there is
// no CR to watch until OLM installs it; and, while that CRD exists, the
// NMState CRs (the operator keeps one).
func OperatorSource(cfg *rest.Config, h handler.EventHandler) (source.Source, error) {
	c, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the client that watches for the standalone kubernetes-nmstate operator: %w", err)
	}
	return &operatorSource{client: c, handler: h}, nil
}

type operatorSource struct {
	client  metadata.Interface
	handler handler.EventHandler

	mu      sync.Mutex
	stopCRs context.CancelFunc // nil while the CRs are not watched
}

// Start starts the watches; they stop with ctx.
func (s *operatorSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	notify := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if o, ok := obj.(client.Object); ok {
			s.handler.Generic(ctx, event.GenericEvent{Object: o}, q)
		}
	}
	changes := cache.ResourceEventHandlerFuncs{AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) }, DeleteFunc: notify}

	operators := metadatainformer.NewFilteredMetadataInformer(s.client, deploymentsResource, metav1.NamespaceAll, 0, cache.Indexers{},
		func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set(operatorLabels)).String()
		})
	if _, err := operators.Informer().AddEventHandler(changes); err != nil {
		return fmt.Errorf("watching the standalone kubernetes-nmstate operator's Deployments: %w", err)
	}
	crd := metadatainformer.NewFilteredMetadataInformer(s.client, crdsResource, "", 0, cache.Indexers{},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nmstatesCRD).String()
		})
	if _, err := crd.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.watchCRs(ctx, changes) },
		DeleteFunc: func(obj any) { s.unwatchCRs(); notify(obj) },
	}); err != nil {
		return fmt.Errorf("watching the NMState CRD: %w", err)
	}
	go operators.Informer().Run(ctx.Done())
	go crd.Informer().Run(ctx.Done())
	go func() { <-ctx.Done(); s.unwatchCRs() }()
	return nil
}

// watchCRs starts the watch on NMState CRs, once their CRD exists.
func (s *operatorSource) watchCRs(ctx context.Context, changes cache.ResourceEventHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopCRs != nil || ctx.Err() != nil {
		return
	}
	crs := metadatainformer.NewFilteredMetadataInformer(s.client, nmstatesResource, "", 0, cache.Indexers{}, nil).Informer()
	if _, err := crs.AddEventHandler(changes); err != nil {
		utilruntime.HandleError(fmt.Errorf("watching NMState CRs: %w", err))
		return
	}
	// A CRD just created may not be served yet: the informer lists again
	// after a back-off, and that is no error worth a log line.
	if err := crs.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		if !apierrors.IsNotFound(err) {
			utilruntime.HandleError(fmt.Errorf("watching NMState CRs: %w", err))
		}
	}); err != nil {
		utilruntime.HandleError(fmt.Errorf("watching NMState CRs: %w", err))
	}
	crCtx, cancel := context.WithCancel(ctx)
	s.stopCRs = cancel
	go crs.Run(crCtx.Done())
}

func (s *operatorSource) unwatchCRs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopCRs != nil {
		s.stopCRs()
		s.stopCRs = nil
	}
}
