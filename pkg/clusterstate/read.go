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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Timeout bounds one Read. CNO reads on every reconcile of its single
// operconfig worker: a slow API server must not hold up the rest of CNO's
// work for longer than this.
const Timeout = 10 * time.Second

var (
	policiesResource = schema.GroupVersionResource{Group: "nmstate.io", Version: "v1", Resource: "nodenetworkconfigurationpolicies"}
	crdGVK           = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	podListGVK       = schema.GroupVersionKind{Version: "v1", Kind: "PodList"}

	serviceAccountListGVK = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccountList"}
)

// Readers are what Read reads with.
type Readers struct {
	// Workloads reads the handler DaemonSet and the webhook Deployment: the
	// host passes its cache, CNO its uncached client.
	Workloads client.Reader
	// Live reads built-in kinds, uncached: another manager's Deployment and
	// DaemonSets, and the policies CRD.
	Live client.Reader
	// Resources reads the nmstate.io resources by their path. They may not
	// be served: a client that finds the path of a kind through a REST
	// mapper would load discovery again at each miss, and CNO's mapper
	// reloads all of it, on every reconcile and outside Timeout. By path, a
	// resource that is not served is one 404: not installed.
	Resources dynamic.Interface
}

// Read reads what nmstate.Render needs of the cluster. A failed read does
// not stop the others: a failure to look for another manager must not hide
// a running handler from the conditions.
func Read(ctx context.Context, r Readers) nmstate.State {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	s := nmstate.State{Policies: -1}
	var errs []error
	if err := ReadWorkloads(ctx, r.Workloads, &s); err != nil {
		errs = append(errs, err)
	}
	other, err := OtherManager(ctx, r.Live, r.Resources)
	if err != nil {
		errs = append(errs, err)
	}
	s.Other = other
	if s.Policies, err = CountPolicies(ctx, r.Resources); err != nil {
		errs = append(errs, err)
	}
	if s.Installed, s.HandlerOn, err = installedUnlessDeployed(ctx, r.Live, s.Handler); err != nil {
		errs = append(errs, err)
	}
	if s.Installed {
		if err := readAccounts(ctx, r.Workloads, &s); err != nil {
			errs = append(errs, err)
		}
	}
	// With both workloads gone, what is left of their pods holds up the
	// removal of their accounts and RBAC. Only then is it counted, and only
	// where there is anything of the plugin's to remove.
	switch {
	case !s.WorkloadsKnown || s.Handler != nil || s.Webhook != nil:
		s.Pods = -1
	case s.Installed:
		if s.Pods, err = CountPods(ctx, r.Live); err != nil {
			s.Pods = -1
			errs = append(errs, err)
		}
	}
	s.Err = errors.Join(errs...)
	return s
}

// installedUnlessDeployed is Installed, with no read while the plugin's own
// handler is deployed: that says it was installed, and on. Both matter only
// to a decision that is off (nmstate.Decision.RestoreKept, and a default
// kept on for policies); Read comes before the decision, so the deployed
// handler stands for "on".
func installedUnlessDeployed(ctx context.Context, r client.Reader, handler *appsv1.DaemonSet) (installed, handlerOn bool, err error) {
	if handler != nil && nmstate.OwnHandler(handler) {
		return true, true, nil
	}
	return Installed(ctx, r)
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

// readAccounts reads into s the workloads' ServiceAccounts and what each
// workload is stamped with (nmstate.Accounts): one list of the accounts'
// metadata in nmstate.Namespace, and the metrics Deployment; the handler
// and the webhook are in s already (ReadWorkloads).
func readAccounts(ctx context.Context, c client.Reader, s *nmstate.State) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(serviceAccountListGVK)
	// The plugin renders three; the limit bounds the read whatever else
	// carries its label there.
	if err := c.List(ctx, list, client.InNamespace(nmstate.Namespace), client.HasLabels{nmstate.OwnerLabel}, client.Limit(10)); err != nil {
		return fmt.Errorf("listing the service accounts in %s: %w", nmstate.Namespace, err)
	}
	acc := nmstate.Accounts{Accounts: map[string]nmstate.Stamped{}, Workloads: map[string]nmstate.Stamped{}}
	for _, sa := range list.Items {
		acc.Accounts[sa.Name] = nmstate.Stamped{UID: sa.UID, Created: sa.CreationTimestamp.Time}
	}
	stamped := func(o metav1.Object, template metav1.ObjectMeta) {
		acc.Workloads[o.GetName()] = nmstate.Stamped{UID: types.UID(template.Annotations[nmstate.AccountUIDAnnotation]), Created: o.GetCreationTimestamp().Time}
	}
	if s.Handler != nil {
		stamped(s.Handler, s.Handler.Spec.Template.ObjectMeta)
	}
	if s.Webhook != nil {
		stamped(s.Webhook, s.Webhook.Spec.Template.ObjectMeta)
	}
	metrics := &appsv1.Deployment{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.MetricsDeployment}, metrics); {
	case err == nil:
		stamped(metrics, metrics.Spec.Template.ObjectMeta)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the metrics Deployment: %w", err)
	}
	s.Accounts = acc
	return nil
}

// CountPolicies counts the NodeNetworkConfigurationPolicies from one item
// and the API server's count of the rest (remainingItemCount), so the
// request costs the same at 10 policies as at 10,000. 0 when they are not
// served: then none can exist.
func CountPolicies(ctx context.Context, r dynamic.Interface) (int, error) {
	policies, err := r.Resource(policiesResource).List(ctx, metav1.ListOptions{Limit: 1})
	switch {
	case apierrors.IsNotFound(err):
		return 0, nil
	case err != nil:
		return -1, fmt.Errorf("counting NodeNetworkConfigurationPolicies: %w", err)
	}
	return listedCount(policies, len(policies.Items)), nil
}

// CountPods counts the pods of the plugin's workloads (label
// app=kubernetes-nmstate in nmstate.Namespace) from one item's metadata and
// the API server's count of the rest, as CountPolicies does.
func CountPods(ctx context.Context, r client.Reader) (int, error) {
	pods := &metav1.PartialObjectMetadataList{}
	pods.SetGroupVersionKind(podListGVK)
	if err := r.List(ctx, pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"app": "kubernetes-nmstate"}, client.Limit(1)); err != nil {
		return 0, fmt.Errorf("counting the pods left in %s: %w", nmstate.Namespace, err)
	}
	return listedCount(pods, len(pods.Items)), nil
}

// listedCount counts what a list limited to a few items stands for: the
// items it holds and the API server's count of the rest.
func listedCount(list metav1.ListInterface, items int) int {
	switch {
	case list.GetRemainingItemCount() != nil:
		return items + int(*list.GetRemainingItemCount())
	case list.GetContinue() != "":
		// An API server that gives no count still says more exist: at least
		// one more, which is what keeping a running handler, or its
		// accounts, depends on.
		return items + 1
	}
	return items
}

// Installed reports whether the plugin's NodeNetworkConfigurationPolicy CRD
// exists and is not being deleted, and whether it carries
// nmstate.HandlerOnAnnotation: one metadata read. A CRD without the owner
// label is another manager's, and says nothing of the plugin.
func Installed(ctx context.Context, r client.Reader) (installed, handlerOn bool, err error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(crdGVK)
	switch err := r.Get(ctx, client.ObjectKey{Name: nmstate.PoliciesCRD}, crd); {
	case apierrors.IsNotFound(err):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("reading CustomResourceDefinition %s: %w", nmstate.PoliciesCRD, err)
	}
	_, ours := crd.GetLabels()[nmstate.OwnerLabel]
	installed = ours && crd.GetDeletionTimestamp() == nil
	return installed, installed && crd.GetAnnotations()[nmstate.HandlerOnAnnotation] == "true", nil
}
