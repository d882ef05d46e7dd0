package clusterstate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

var (
	// operatorLabels find the standalone (OLM) kubernetes-nmstate operator's
	// Deployment.
	operatorLabels = client.MatchingLabels{"app": "kubernetes-nmstate-operator"}
	// handlerLabels find kubernetes-nmstate handler DaemonSets, whoever
	// deployed them. Upstream's manifests (deploy/handler/operator.yaml, which
	// its operator renders) and cluster-network-addons-operator's put the
	// label the handlers find their peers by on the DaemonSet as well as on
	// its pods, so a label-selected, metadata-only list finds them; the pod
	// template cannot be selected on without reading every DaemonSet of the
	// cluster (docs/architecture.md).
	handlerLabels = client.MatchingLabels{"component": "kubernetes-nmstate-handler"}

	nmstatesResource = schema.GroupVersionResource{Group: "nmstate.io", Version: "v1", Resource: "nmstates"}
)

// OtherManager finds whoever else deploys kubernetes-nmstate: an NMState CR,
// the OLM operator's Deployment, or a handler DaemonSet in any namespace that
// is not the plugin's own. Only one handler may run per node, so CNO must
// then deploy nothing. The CR comes first, read whole, because its settings
// are what a handover carries over; the rest is metadata only. Give it an
// uncached reader: these are rare, cluster-wide lookups not worth an
// informer; each is label-selected or tiny and bounded by a limit. The CRs
// are read by their path (Readers.Resources says why). Read calls it for the
// host and for CNO alike.
func OtherManager(ctx context.Context, reader client.Reader, resources dynamic.Interface) (nmstate.Other, error) {
	// Two tell one CR from several.
	crs, err := resources.Resource(nmstatesResource).List(ctx, metav1.ListOptions{Limit: 2})
	switch {
	case apierrors.IsNotFound(err):
		// No NMState CRD: no standalone operator's CR.
	case err != nil:
		return nmstate.Other{}, fmt.Errorf("looking for NMState CRs: %w", err)
	case len(crs.Items) > 0:
		other := nmstate.Other{ManagedBy: "the standalone kubernetes-nmstate operator (NMState CR " + crs.Items[0].GetName() + ")"}
		if len(crs.Items) == 1 && crs.GetContinue() == "" {
			other.StandaloneCR = &crs.Items[0]
		}
		return other, nil
	}

	deployments := &metav1.PartialObjectMetadataList{}
	deployments.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := reader.List(ctx, deployments, operatorLabels, client.Limit(1)); err != nil {
		return nmstate.Other{}, fmt.Errorf("looking for a standalone kubernetes-nmstate operator: %w", err)
	}
	if len(deployments.Items) > 0 {
		return nmstate.Other{ManagedBy: "the standalone kubernetes-nmstate operator (Deployment " + objectName(&deployments.Items[0]) + ")"}, nil
	}

	handlers := &metav1.PartialObjectMetadataList{}
	handlers.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DaemonSetList"))
	// At most one of them is the plugin's own, so two are enough to find
	// another one if there is any.
	if err := reader.List(ctx, handlers, handlerLabels, client.Limit(2)); err != nil {
		return nmstate.Other{}, fmt.Errorf("looking for other kubernetes-nmstate handlers: %w", err)
	}
	for i := range handlers.Items {
		ds := &handlers.Items[i]
		if nmstate.OwnHandler(ds) {
			continue
		}
		other := nmstate.Other{ManagedBy: "whoever deployed DaemonSet " + objectName(ds) + ", a kubernetes-nmstate handler the Cluster Network Operator did not render",
			HandlerName: objectName(ds)}
		// One more read, only while another manager's handler defers the
		// plugin: whether it runs anywhere is what its conditions report.
		whole := &appsv1.DaemonSet{}
		switch err := reader.Get(ctx, client.ObjectKeyFromObject(ds), whole); {
		case err == nil:
			other.Handler = whole
		case !apierrors.IsNotFound(err):
			return nmstate.Other{}, fmt.Errorf("reading DaemonSet %s: %w", objectName(ds), err)
		}
		return other, nil
	}
	return nmstate.Other{}, nil
}

func objectName(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
