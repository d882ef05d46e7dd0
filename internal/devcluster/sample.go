package devcluster

import (
	"context"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// The objects a cluster starts with, and the status its controllers would
// write, for the demo, the benchmarks and the end-to-end tests.

// CreateInfrastructure creates infrastructures.config.openshift.io/cluster
// with the status the installer sets.
func CreateInfrastructure(ctx context.Context, c client.Client, platform configv1.PlatformType, controlPlane, infra configv1.TopologyMode) error {
	obj := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating the Infrastructure: %w", err)
	}
	obj.Status = configv1.InfrastructureStatus{
		Platform:               platform,
		PlatformStatus:         &configv1.PlatformStatus{Type: platform},
		ControlPlaneTopology:   controlPlane,
		InfrastructureTopology: infra,
		InfrastructureName:     "sample",
		APIServerURL:           "https://api.sample.example.com:6443",
		APIServerInternalURL:   "https://api-int.sample.example.com:6443",
	}
	// As the installer sets them: CNO reads the region of these two
	// (pkg/platform/platform.go:101-105 at 2a6a57fef) without a nil check.
	switch platform {
	case configv1.AWSPlatformType:
		obj.Status.PlatformStatus.AWS = &configv1.AWSPlatformStatus{Region: "us-east-1"}
	case configv1.GCPPlatformType:
		obj.Status.PlatformStatus.GCP = &configv1.GCPPlatformStatus{Region: "us-central1", ProjectID: "sample"}
	}
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("setting the Infrastructure status: %w", err)
	}
	return nil
}

// CreateNetwork creates network.operator.openshift.io/cluster with the given
// spec.kubernetesNMState (nil: absent).
func CreateNetwork(ctx context.Context, c client.Client, nmstateSpec map[string]any) error {
	return createNetwork(ctx, c, map[string]any{"managementState": "Managed"}, nmstateSpec)
}

// createNetwork creates network.operator.openshift.io/cluster with spec and
// spec.kubernetesNMState (nil: absent).
func createNetwork(ctx context.Context, c client.Client, spec, nmstateSpec map[string]any) error {
	if nmstateSpec != nil {
		spec["kubernetesNMState"] = nmstateSpec
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": "cluster"}, "spec": spec,
	}}
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating the Network.operator: %w", err)
	}
	return nil
}

// PatchNetwork merge-patches network.operator.openshift.io/cluster.
func PatchNetwork(ctx context.Context, c client.Client, patch string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(controller.NetworkGVK)
	obj.SetName("cluster")
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("patching the Network.operator with %s: %w", patch, err)
	}
	return nil
}

// ReadNetwork reads network.operator.openshift.io/cluster.
func ReadNetwork(ctx context.Context, c client.Reader) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(controller.NetworkGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, obj); err != nil {
		return nil, fmt.Errorf("reading the Network.operator: %w", err)
	}
	return obj, nil
}

// Conditions reads the Network.operator's status conditions by type.
func Conditions(ctx context.Context, c client.Reader) (map[string]operv1.OperatorCondition, error) {
	obj, err := ReadNetwork(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[string]operv1.OperatorCondition{}
	for _, cond := range nmstate.NetworkConditions(obj) {
		out[cond.Type] = cond
	}
	return out, nil
}

// ResourceVersions maps each object, as "Kind/namespace/name", to its
// resourceVersion on the server.
func ResourceVersions(ctx context.Context, c client.Reader, objs []*unstructured.Unstructured) (map[string]string, error) {
	out := map[string]string{}
	for _, obj := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out[obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName()] = got.GetResourceVersion()
	}
	return out, nil
}
