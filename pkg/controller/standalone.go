package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperatorLabelSelector finds a standalone kubernetes-nmstate operator.
const OperatorLabelSelector = "app=kubernetes-nmstate-operator"

var nmstateCRGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NMStateList"}

// StandaloneOperatorPresent looks for the OLM operator's Deployment or an
// NMState CR. Give it an uncached reader: these are rare, cluster-wide
// lookups not worth an informer. The host and CNO both decide with it.
func StandaloneOperatorPresent(ctx context.Context, reader client.Reader) (bool, error) {
	deployments := &metav1.PartialObjectMetadataList{}
	deployments.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	selector, err := labels.Parse(OperatorLabelSelector)
	if err != nil {
		return false, err
	}
	if err := reader.List(ctx, deployments, client.MatchingLabelsSelector{Selector: selector}, client.Limit(1)); err != nil {
		return false, fmt.Errorf("looking for a standalone kubernetes-nmstate operator: %w", err)
	}
	if len(deployments.Items) > 0 {
		return true, nil
	}
	crs := &metav1.PartialObjectMetadataList{}
	crs.SetGroupVersionKind(nmstateCRGVK)
	if err := reader.List(ctx, crs, client.Limit(1)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return false, nil // no NMState CRD: no standalone operator
		}
		return false, fmt.Errorf("looking for NMState CRs: %w", err)
	}
	return len(crs.Items) > 0, nil
}
