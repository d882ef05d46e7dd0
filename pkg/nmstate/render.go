package nmstate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/cluster-network-operator/pkg/render"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KeptOnDisable reports whether the rendered object group/kind/name stays on
// the cluster when it is no longer rendered: the CRDs, which hold users'
// policies; the ValidatingAdmissionPolicies and their bindings, so the
// policies the CRDs still accept are checked as when enabled and the CRDs
// stay protected from an unintended delete; the cluster-reader
// role, so that whoever could read the policies still can; and the
// Namespace, where the standalone operator may live. A consumer must
// neither prune these nor give them an owner reference whose deletion would
// garbage-collect them.
func KeptOnDisable(group, kind, name string) bool {
	if group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition" {
		return slices.Contains(crdNames, name)
	}
	if group == "admissionregistration.k8s.io" && kind == "ValidatingAdmissionPolicy" {
		return name == ValidationPolicy || name == CRDDeletionProtection
	}
	if group == "admissionregistration.k8s.io" && kind == "ValidatingAdmissionPolicyBinding" {
		return name == ValidationPolicyBinding || name == CRDDeletionProtection
	}
	if group == "rbac.authorization.k8s.io" && kind == "ClusterRole" {
		return name == ClusterReaderRole
	}
	return group == "" && kind == "Namespace" && name == Namespace
}

// Images are what the rendered workloads run, and the release they are of.
type Images struct {
	// Handler is the kubernetes-nmstate handler image; the webhook and the
	// metrics manager run it too.
	Handler string
	// ReleaseVersion is the release.openshift.io/version the workloads carry.
	ReleaseVersion string
}

// ImagesFromEnv reads the images from CNO's environment
// (manifests/0000_70_cluster-network-operator_03_deployment.yaml): the one
// place this package reads the environment.
func ImagesFromEnv() Images {
	return Images{Handler: os.Getenv(EnvHandlerImage), ReleaseVersion: os.Getenv(EnvReleaseVersion)}
}

// renderParams is everything the templates need. Render reads nothing else.
type renderParams struct {
	HandlerImage   string
	ReleaseVersion string

	HandlerNodeSelector map[string]string
	HandlerTolerations  []corev1.Toleration
	// HandlerAffinity is nil for none.
	HandlerAffinity *corev1.Affinity

	// Infra* place the webhook and every other Deployment. Empty
	// tolerations and a nil affinity are left out.
	InfraNodeSelector map[string]string
	InfraTolerations  []corev1.Toleration
	InfraAffinity     *corev1.Affinity

	WebhookReplicas int

	// ProbeDNSHost is the name the handler's DNS probe resolves.
	ProbeDNSHost string
	// DebugLogs makes the handler log at debug level and its liveness
	// probe's nmstatectl verbose.
	DebugLogs bool
}

// defaultProbeDNSHost is upstream's default target of the handler's DNS
// probe.
const defaultProbeDNSHost = "root-servers.net"

const (
	masterRole       = "node-role.kubernetes.io/master"
	controlPlaneRole = "node-role.kubernetes.io/control-plane"
)

// newRenderParams derives placement, replicas and the handler's settings from
// the config and the cluster topology.
func newRenderParams(cfg Config, c cluster, images Images) renderParams {
	hosted := c.ControlPlaneTopology == configv1.ExternalTopologyMode
	replicas := 2
	// Counted from the topology, not from nodes: a node joining or leaving
	// must not change the rendered objects.
	if c.InfrastructureTopology == configv1.SingleReplicaTopologyMode ||
		(!hosted && c.ControlPlaneTopology == configv1.SingleReplicaTopologyMode) {
		replicas = 1
	}
	tolerations := cfg.Handler.Tolerations
	if tolerations == nil {
		tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	infraTolerations, infraAffinity := cfg.Infra.Tolerations, cfg.Infra.Affinity
	// With a hosted control plane its nodes are not in this cluster: nothing
	// to tolerate or prefer.
	if infraTolerations == nil && !hosted {
		infraTolerations = []corev1.Toleration{
			{Key: masterRole, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: controlPlaneRole, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		}
	}
	if infraAffinity == nil && !hosted {
		infraAffinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 10,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: controlPlaneRole, Operator: corev1.NodeSelectorOpExists},
				}},
			}},
		}}
	}
	probeHost := cfg.ProbeDNSHost
	if probeHost == "" {
		probeHost = defaultProbeDNSHost
	}
	return renderParams{
		HandlerImage:        images.Handler,
		ReleaseVersion:      images.ReleaseVersion,
		HandlerNodeSelector: linuxSelector(cfg.Handler.NodeSelector),
		HandlerTolerations:  tolerations,
		HandlerAffinity:     cfg.Handler.Affinity,
		InfraNodeSelector:   linuxSelector(cfg.Infra.NodeSelector),
		InfraTolerations:    infraTolerations,
		InfraAffinity:       infraAffinity,
		WebhookReplicas:     replicas,
		ProbeDNSHost:        probeHost,
		DebugLogs:           cfg.Verbose(),
	}
}

// linuxSelector is selector with kubernetes.io/os=linux: the images are
// Linux images, whatever else the user selects.
func linuxSelector(selector map[string]string) map[string]string {
	out := map[string]string{linuxLabel: "linux"}
	for k, v := range selector {
		out[k] = v
	}
	return out
}

// renderData is the template data for p, by the keys bindata uses.
func renderData(p renderParams) render.RenderData {
	data := render.MakeRenderData()
	data.Data["HandlerImage"] = p.HandlerImage
	data.Data["ReleaseVersion"] = p.ReleaseVersion
	data.Data["HandlerNodeSelector"] = p.HandlerNodeSelector
	data.Data["HandlerTolerations"] = p.HandlerTolerations
	data.Data["HandlerAffinity"] = p.HandlerAffinity
	data.Data["InfraNodeSelector"] = p.InfraNodeSelector
	data.Data["InfraTolerations"] = p.InfraTolerations
	data.Data["InfraAffinity"] = p.InfraAffinity
	data.Data["WebhookReplicas"] = p.WebhookReplicas
	data.Data["ProbeDNSHost"] = p.ProbeDNSHost
	data.Data["DebugLogs"] = p.DebugLogs
	return data
}

// renderObjects renders the kubernetes-nmstate manifests under manifestDir
// (CNO's bindata root) with CNO's renderer. It returns nil when d renders
// nothing, and only what KeptOnDisable names when d is off but restores
// those.
func renderObjects(d Decision, p renderParams, manifestDir string) ([]*unstructured.Unstructured, error) {
	if !d.Renders() {
		return nil, nil
	}
	if d.Enabled && p.HandlerImage == "" {
		return nil, inputError(ReasonMissingImage,
			"no kubernetes-nmstate handler image: set %s in the Cluster Network Operator's environment (manifests/0000_70_cluster-network-operator_03_deployment.yaml)", EnvHandlerImage)
	}
	if p.WebhookReplicas < 1 {
		return nil, fmt.Errorf("webhook replicas must be at least 1, got %d", p.WebhookReplicas)
	}

	data := renderData(p)
	dir := filepath.Join(manifestDir, manifestSubdir)
	objs, err := render.RenderDir(dir, &data)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("rendering %s: no manifests found", dir)
	}
	for _, obj := range objs {
		if obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("rendering %s: an object has no kind or name (an empty YAML document?): %v", dir, obj.Object)
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[OwnerLabel] = PluginVersion
		obj.SetLabels(labels)
	}
	if !d.Enabled {
		objs = slices.DeleteFunc(objs, func(obj *unstructured.Unstructured) bool {
			return !KeptOnDisable(obj.GroupVersionKind().Group, obj.GetKind(), obj.GetName())
		})
		return objs, nil
	}
	for _, obj := range objs {
		if obj.GetKind() == "CustomResourceDefinition" && obj.GetName() == PoliciesCRD {
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[HandlerOnAnnotation] = "true"
			obj.SetAnnotations(annotations)
		}
	}
	return objs, nil
}
