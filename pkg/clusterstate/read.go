// Package clusterstate reads what the kubernetes-nmstate decision and its
// conditions need from the cluster: whoever else deploys kubernetes-nmstate,
// the deployed handler and webhook, and how many policies exist. CNO's
// Bootstrap and the development host (pkg/controller) both call Read, so the
// reads CNO makes on every reconcile are the ones `make test` runs. Every
// list is limited and the whole read has a timeout: its cost does not grow
// with the number of nodes or policies.
package clusterstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Timeout bounds one Read. CNO reads on every reconcile of its single
// operconfig worker: a slow API server must not hold up the rest of CNO's
// work for longer than this.
const Timeout = 10 * time.Second

var (
	nncpListGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NodeNetworkConfigurationPolicyList"}
	crdGVK      = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

// Read reads what nmstate.Render needs of the cluster. workloads reads the handler DaemonSet and the
// webhook Deployment (the host passes its cache, CNO its uncached client);
// live reads the rest, which no cache holds. A failed read does not stop the
// others: a failure to look for another manager must not hide a running
// handler from the conditions.
func Read(ctx context.Context, workloads, live client.Reader) nmstate.State {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	s := nmstate.State{Policies: -1}
	var errs []error
	if err := ReadWorkloads(ctx, workloads, &s); err != nil {
		errs = append(errs, err)
	}
	other, err := OtherManager(ctx, live)
	if err != nil {
		errs = append(errs, err)
	}
	s.Other = other
	if s.Policies, err = CountPolicies(ctx, live); err != nil {
		errs = append(errs, err)
	}
	if s.Installed, err = Installed(ctx, live); err != nil {
		errs = append(errs, err)
	}
	s.Err = errors.Join(errs...)
	return s
}

// ReadWorkloads reads the handler DaemonSet and the webhook Deployment into
// s, nil when absent, and sets s.WorkloadsKnown when both reads answered.
func ReadWorkloads(ctx context.Context, c client.Reader, s *nmstate.State) error {
	s.Handler, s.Webhook, s.WorkloadsKnown = nil, nil, false
	ds := &appsv1.DaemonSet{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); {
	case err == nil:
		s.Handler = ds
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the handler DaemonSet: %w", err)
	}
	dep := &appsv1.Deployment{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.WebhookDeployment}, dep); {
	case err == nil:
		s.Webhook = dep
	case !apierrors.IsNotFound(err):
		s.Handler = nil
		return fmt.Errorf("reading the webhook Deployment: %w", err)
	}
	s.WorkloadsKnown = true
	return nil
}

// CountPolicies counts the NodeNetworkConfigurationPolicies from one item's
// metadata and the API server's count of the rest (remainingItemCount), so
// the request costs the same at 10 policies as at 10,000. 0 when their CRD
// is not served: then none can exist.
func CountPolicies(ctx context.Context, r client.Reader) (int, error) {
	policies := &metav1.PartialObjectMetadataList{}
	policies.SetGroupVersionKind(nncpListGVK)
	switch err := r.List(ctx, policies, client.Limit(1)); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return 0, nil
	case err != nil:
		return -1, fmt.Errorf("counting NodeNetworkConfigurationPolicies: %w", err)
	}
	n := len(policies.Items)
	switch {
	case policies.RemainingItemCount != nil:
		n += int(*policies.RemainingItemCount)
	case policies.Continue != "":
		// An API server that gives no count still says more exist: at least
		// one more, which is what keeping a running handler depends on.
		n++
	}
	return n, nil
}

// Installed reports whether the plugin's NodeNetworkConfigurationPolicy CRD
// exists and is not being deleted: one metadata read. A CRD without the
// owner label is another manager's, and says nothing of the plugin.
func Installed(ctx context.Context, r client.Reader) (bool, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(crdGVK)
	switch err := r.Get(ctx, client.ObjectKey{Name: nmstate.CRDNames()[0]}, crd); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading CustomResourceDefinition %s: %w", nmstate.CRDNames()[0], err)
	}
	_, ours := crd.GetLabels()[nmstate.OwnerLabel]
	return ours && crd.GetDeletionTimestamp() == nil, nil
}
