package controller

import (
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// NewScheme has every type the host reads or writes.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, configv1.Install, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the scheme: %w", err)
		}
	}
	return s, nil
}

// CacheOptions keeps the cache to what the host owns: the two singletons,
// the operands' namespace and objects with the owner label. Nodes, pods,
// NodeNetworkStates and policies are never cached, so memory does not grow
// with the cluster.
func CacheOptions() cache.Options {
	owned, _ := labels.NewRequirement(nmstate.OwnerLabel, selection.Exists, nil)
	byName := fields.OneTermEqualSelector("metadata.name", clusterName)
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(NetworkGVK)
	// An explicit label selector: without one the default below applies.
	all := labels.Everything()
	operands := map[string]cache.Config{nmstate.Namespace: {LabelSelector: all}}
	return cache.Options{
		DefaultLabelSelector: labels.NewSelector().Add(*owned),
		ByObject: map[client.Object]cache.ByObject{
			network:                    {Field: byName, Label: all},
			&configv1.Infrastructure{}: {Field: byName, Label: all},
			&appsv1.DaemonSet{}:        {Namespaces: operands, Label: all},
			&appsv1.Deployment{}:       {Namespaces: operands, Label: all},
		},
	}
}

// NewManager returns a controller-runtime manager set up for the host.
// Leader election is the caller's to set in opts: CNO runs the plugin under
// its own lock, `cno-nmstate run` under a Lease of its own. The lock reads
// and writes its Lease with a client of its own, never through the cache,
// which holds nothing but the host's objects.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	opts.Scheme = scheme
	opts.Cache = CacheOptions()
	// Read the Network (unstructured, to see fields the vendored type may
	// lack) from the cache too; controller-runtime reads unstructured objects
	// from the API server by default.
	opts.Client.Cache = &client.CacheOptions{Unstructured: true}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, nil
}
