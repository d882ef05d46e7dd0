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

	operv1 "github.com/openshift/api/operator/v1"
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

// State is what Read found.
type State struct {
	// Other is whoever else deploys kubernetes-nmstate; unknown when Err
	// says OtherErr failed.
	Other Other
	// Handler and Webhook are the deployed workloads, nil when absent.
	Handler *appsv1.DaemonSet
	Webhook *appsv1.Deployment
	// WorkloadsKnown is false when the workloads could not be read: the
	// conditions then keep saying what they said, instead of "not created".
	WorkloadsKnown bool
	// Policies is how many NodeNetworkConfigurationPolicies exist (0 when
	// their CRD is not served); -1 when unknown.
	Policies int
	// Installed is whether the plugin's policies CRD exists, for
	// nmstate.Cluster.Installed.
	Installed bool
	// Err joins every failed read. Any of them stops the plugin from
	// rendering this time, so that what is deployed stays as it is.
	Err error
}

// Read reads the state. workloads reads the handler DaemonSet and the
// webhook Deployment (the host passes its cache, CNO its uncached client);
// live reads the rest, which no cache holds. A failed read does not stop the
// others: a failure to look for another manager must not hide a running
// handler from the conditions.
func Read(ctx context.Context, workloads, live client.Reader) State {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	s := State{Policies: -1}
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
func ReadWorkloads(ctx context.Context, c client.Reader, s *State) error {
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
	switch err := r.Get(ctx, client.ObjectKey{Name: nmstate.CRDNames[0]}, crd); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading CustomResourceDefinition %s: %w", nmstate.CRDNames[0], err)
	}
	_, ours := crd.GetLabels()[nmstate.OwnerLabel]
	return ours && crd.GetDeletionTimestamp() == nil, nil
}

// Observed is the state as nmstate.Conditions reads it.
func (s State) Observed(previous []operv1.OperatorCondition, now time.Time) nmstate.Observed {
	return nmstate.Observed{
		Handler:          s.Handler,
		Webhook:          s.Webhook,
		WorkloadsUnknown: !s.WorkloadsKnown,
		Policies:         s.Policies,
		OtherHandler:     s.Other.HandlerObject,
		Previous:         previous,
		Now:              now,
	}
}

// Apply sets what the decision reads of the state on c: who else manages
// kubernetes-nmstate, with the NMState CR's settings, whether the plugin
// runs it (its own handler exists, or previous, the Network's conditions,
// say it last decided so: nmstate.WasOn), how many policies it would leave
// unenforced, and whether it was installed.
func (s State) Apply(c *nmstate.Cluster, previous []operv1.OperatorCondition) {
	c.ManagedBy, c.StandaloneSettings, c.OtherHandler = s.Other.ManagedBy, s.Other.NMState, s.Other.Handler
	c.Deployed = (s.Handler != nil && OwnHandler(s.Handler)) || nmstate.WasOn(previous)
	c.Policies = s.Policies
	c.Installed = s.Installed
}
