// Package prune deletes what the plugin deployed and no longer renders. It
// finds those objects by the owner label (nmstate.OwnerLabel), not by a list
// the consumer keeps, and decides each with nmstate.DecidePrune. The host
// and CNO both call Prune, so what goes and what stays is the same in both.
//
// CNO does not prune kubernetes-nmstate through its ClusterOperator's related
// objects, as it prunes its own: a CNO that does not know kubernetes-nmstate
// (a downgrade) deletes every related object it does not render, and would so
// delete the running handler, its account, its namespace and the admission
// policies. None of them is listed there; Prune finds them by label instead.
package prune

import (
	"context"
	"fmt"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// prunable lists every kind the bindata may render, with the Go type it is
// read as. Objects of these kinds that carry nmstate.OwnerLabel and are no
// longer rendered are deleted, except the kept kinds below and what
// nmstate.KeptOnDisable names (the admission policy, its binding and the
// cluster-reader ClusterRole).
var prunable = []client.Object{
	&corev1.ServiceAccount{}, &corev1.Service{},
	&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}, &rbacv1.Role{}, &rbacv1.RoleBinding{},
	&appsv1.DaemonSet{}, &appsv1.Deployment{}, &policyv1.PodDisruptionBudget{},
	&admissionregv1.MutatingWebhookConfiguration{},
	&admissionregv1.ValidatingAdmissionPolicy{}, &admissionregv1.ValidatingAdmissionPolicyBinding{},
	&networkingv1.NetworkPolicy{},
	MetadataOnly(MonitoringGroupVersion.WithKind("ServiceMonitor")),
	MetadataOnly(MonitoringGroupVersion.WithKind("PrometheusRule")),
}

// MonitoringGroupVersion is prometheus-operator's API, whose CRDs OpenShift's
// cluster-monitoring operator installs. Its kinds have no Go type here (the
// library would have to import prometheus-operator's module, which CNO does
// not): they are applied unstructured and read as metadata only, which is
// all that skipping an unchanged apply and pruning need.
var MonitoringGroupVersion = schema.GroupVersion{Group: "monitoring.coreos.com", Version: "v1"}

// MetadataOnly is an empty object of gvk read as its metadata only.
func MetadataOnly(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
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

// Owned lists the metadata of every object that carries nmstate.OwnerLabel,
// of every kind in OwnedTypes, each with its own kind set: what the plugin
// deployed. A kind that is not served (no monitoring stack) has none.
func Owned(ctx context.Context, c client.Client) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	for _, typ := range OwnedTypes() {
		gvk, err := c.GroupVersionKindFor(typ)
		if err != nil {
			return nil, err
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		switch err := c.List(ctx, list, client.HasLabels{nmstate.OwnerLabel}); {
		case meta.IsNoMatchError(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for _, item := range list.Items {
			item.SetGroupVersionKind(gvk)
			out = append(out, item)
		}
	}
	return out, nil
}
