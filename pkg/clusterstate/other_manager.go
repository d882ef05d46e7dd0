package clusterstate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// OtherManager finds whoever else deploys kubernetes-nmstate and really
// runs: the standalone operator, when it has an NMState CR (whose settings
// a handover carries over) and its Deployment has an available replica or
// the CR's handler runs; or a handler DaemonSet in any namespace that is
// not the plugin's own. Only one handler may run per node, so CNO must then
// deploy nothing. What merely looks like a manager does not defer the
// plugin, whose handler keeps running: an available operator with no CR
// deploys nothing; an operator Deployment with no available replica and an
// NMState CR with no operator run nothing, and Other.Operator and
// Other.LeftCR carry them to the conditions, which name them and how to
// remove them. A handler DaemonSet defers it even with no pod: its
// controller may schedule it at any moment (its conditions say when it
// runs nowhere).
//
// Give it an uncached reader: these are rare, cluster-wide lookups not
// worth an informer; each is label-selected or tiny and bounded by a limit,
// and only what was found is read whole. The CRs are read by their path
// (Readers.Resources says why). Read calls it for the host and for CNO alike.
func OtherManager(ctx context.Context, reader client.Reader, resources dynamic.Interface) (nmstate.Other, error) {
	var other nmstate.Other
	// Two tell one CR from several.
	crs, err := resources.Resource(nmstatesResource).List(ctx, metav1.ListOptions{Limit: 2})
	switch {
	case apierrors.IsNotFound(err):
		// No NMState CRD: no standalone operator's CR.
		crs = &unstructured.UnstructuredList{}
	case err != nil:
		return nmstate.Other{}, fmt.Errorf("looking for NMState CRs: %w", err)
	}

	deployments := &metav1.PartialObjectMetadataList{}
	deployments.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := reader.List(ctx, deployments, operatorLabels, client.Limit(1)); err != nil {
		return nmstate.Other{}, fmt.Errorf("looking for a standalone kubernetes-nmstate operator: %w", err)
	}
	if len(deployments.Items) > 0 {
		operator := &appsv1.Deployment{}
		switch err := reader.Get(ctx, client.ObjectKeyFromObject(&deployments.Items[0]), operator); {
		case err == nil:
			other.Operator = operator
		case !apierrors.IsNotFound(err):
			return nmstate.Other{}, fmt.Errorf("reading Deployment %s: %w", objectName(&deployments.Items[0]), err)
		}
	}
	operatorRuns := other.Operator != nil && other.Operator.Status.AvailableReplicas > 0

	handlers := &metav1.PartialObjectMetadataList{}
	handlers.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DaemonSetList"))
	// At most one of them is the plugin's own, so two are enough to find
	// another one if there is any.
	if err := reader.List(ctx, handlers, handlerLabels, client.Limit(2)); err != nil {
		return nmstate.Other{}, fmt.Errorf("looking for other kubernetes-nmstate handlers: %w", err)
	}
	var handler *metav1.PartialObjectMetadata
	for i := range handlers.Items {
		if !nmstate.OwnHandler(&handlers.Items[i]) {
			handler = &handlers.Items[i]
			break
		}
	}

	switch {
	case len(crs.Items) > 0 && (operatorRuns || handler != nil):
		// The CR's handler runs, or its operator: a handover carries the
		// CR's settings over.
		other.ManagedBy = "the standalone kubernetes-nmstate operator (NMState CR " + crs.Items[0].GetName() + ")"
		if len(crs.Items) == 1 && crs.GetContinue() == "" {
			other.StandaloneCR = &crs.Items[0]
		}
	case handler != nil:
		other.ManagedBy = "whoever deployed DaemonSet " + objectName(handler) + ", a kubernetes-nmstate handler the Cluster Network Operator did not render"
		other.HandlerName = objectName(handler)
		// One more read, only while another manager's handler defers the
		// plugin: whether it runs anywhere is what its conditions report.
		whole := &appsv1.DaemonSet{}
		switch err := reader.Get(ctx, client.ObjectKeyFromObject(handler), whole); {
		case err == nil:
			other.Handler = whole
		case !apierrors.IsNotFound(err):
			return nmstate.Other{}, fmt.Errorf("reading DaemonSet %s: %w", objectName(handler), err)
		}
	case len(crs.Items) > 0:
		// Nothing runs for this CR.
		other.LeftCR = crs.Items[0].GetName()
	}
	if other.ManagedBy != "" || operatorRuns {
		// Not idle: in charge, or waiting for a CR to deploy anything.
		other.Operator = nil
	}
	return other, nil
}

func objectName(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
