package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

	nmstateCRGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NMStateList"}
)

// OtherManager names whoever else deploys kubernetes-nmstate, or returns ""
// when nobody does: the OLM operator's Deployment, an NMState CR, or a handler
// DaemonSet in any namespace that is not the plugin's own. Only one handler
// may run per node, so CNO must then deploy nothing. Give it an uncached
// reader: these are rare, cluster-wide lookups not worth an informer; each is
// label-selected or tiny, metadata only and bounded by a limit. The host and
// CNO both decide with it.
func OtherManager(ctx context.Context, reader client.Reader) (string, error) {
	deployments := &metav1.PartialObjectMetadataList{}
	deployments.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := reader.List(ctx, deployments, operatorLabels, client.Limit(1)); err != nil {
		return "", fmt.Errorf("looking for a standalone kubernetes-nmstate operator: %w", err)
	}
	if len(deployments.Items) > 0 {
		return "the standalone kubernetes-nmstate operator (Deployment " + objectName(&deployments.Items[0]) + ")", nil
	}

	crs := &metav1.PartialObjectMetadataList{}
	crs.SetGroupVersionKind(nmstateCRGVK)
	switch err := reader.List(ctx, crs, client.Limit(1)); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		// No NMState CRD: no standalone operator.
	case err != nil:
		return "", fmt.Errorf("looking for NMState CRs: %w", err)
	case len(crs.Items) > 0:
		return "the standalone kubernetes-nmstate operator (NMState CR " + crs.Items[0].GetName() + ")", nil
	}

	handlers := &metav1.PartialObjectMetadataList{}
	handlers.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DaemonSetList"))
	// At most one of them is the plugin's own, so two are enough to find
	// another one if there is any.
	if err := reader.List(ctx, handlers, handlerLabels, client.Limit(2)); err != nil {
		return "", fmt.Errorf("looking for other kubernetes-nmstate handlers: %w", err)
	}
	for i := range handlers.Items {
		if ds := &handlers.Items[i]; !renderedHandler(ds) {
			return "whoever deployed DaemonSet " + objectName(ds) + ", a kubernetes-nmstate handler the Cluster Network Operator did not render", nil
		}
	}
	return "", nil
}

// renderedHandler tells the plugin's own handler DaemonSet from any other:
// its name in its namespace, and the owner label that Render puts on every
// object. The name alone is not enough: the standalone operator deploys its
// handler under the same name, and once an object it adopted has been
// released (controller.go, release) the label is gone and so is the claim.
func renderedHandler(ds client.Object) bool {
	_, owned := ds.GetLabels()[nmstate.OwnerLabel]
	return owned && ds.GetNamespace() == nmstate.Namespace && ds.GetName() == nmstate.HandlerDaemonSet
}
