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

// Names shared with the standalone operator, so docs and must-gather apply to both.
const (
	Namespace         = "openshift-nmstate"
	HandlerDaemonSet  = "nmstate-handler"
	WebhookDeployment = "nmstate-webhook"
	// The metrics manager and the Service Prometheus scrapes it through.
	MetricsDeployment = "nmstate-metrics"
	MetricsService    = "nmstate-monitor"
	// The ValidatingAdmissionPolicy and its binding, named as upstream's.
	ValidationPolicy        = "nncp-validation-policy"
	ValidationPolicyBinding = "nncp-validation-policy-binding"
	// CRDDeletionProtection names the ValidatingAdmissionPolicy and its
	// binding that refuse to delete an nmstate.io CRD whose
	// AllowDeletionAnnotation is not "true".
	CRDDeletionProtection   = "nmstate-crd-deletion-protection"
	AllowDeletionAnnotation = "networkoperator.openshift.io/allow-deletion"
	// ClusterReaderRole aggregates read access to the nmstate API into
	// OpenShift's cluster-reader role.
	ClusterReaderRole = "nmstate-cluster-reader"

	// ManifestSubdir is where the templates live under CNO's bindata root.
	ManifestSubdir = "network/kubernetes-nmstate"

	// OwnerLabel marks every rendered object; its value is Version. Objects
	// with the label that a release no longer renders are pruned by it.
	OwnerLabel = "networkoperator.openshift.io/kubernetes-nmstate"
	// Version is the plugin version. Bump it when the set of rendered
	// objects changes.
	Version = "0.2.0"

	// EnvHandlerImage names the handler image in CNO's Deployment; the
	// webhook runs from the same image.
	EnvHandlerImage   = "KUBERNETES_NMSTATE_HANDLER_IMAGE"
	EnvReleaseVersion = "RELEASE_VERSION"

	linuxLabel = "kubernetes.io/os"
)

// CRDNames are the CRDs that hold users' policies. Disabling never removes
// them; CNO's status manager must list them in keepCRDs.
var CRDNames = []string{
	"nodenetworkconfigurationpolicies.nmstate.io",
	"nodenetworkconfigurationenactments.nmstate.io",
	"nodenetworkstates.nmstate.io",
}

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
		return slices.Contains(CRDNames, name)
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

// RenderParams is everything the templates need. Render reads nothing else.
type RenderParams struct {
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

// DefaultProbeDNSHost is upstream's default target of the handler's DNS
// probe.
const DefaultProbeDNSHost = "root-servers.net"

const (
	masterRole       = "node-role.kubernetes.io/master"
	controlPlaneRole = "node-role.kubernetes.io/control-plane"
)

// NewRenderParams derives placement, replicas and the handler's settings from
// the config and the cluster topology.
func NewRenderParams(cfg Config, c Cluster, handlerImage, releaseVersion string) RenderParams {
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
		probeHost = DefaultProbeDNSHost
	}
	return RenderParams{
		HandlerImage:        handlerImage,
		ReleaseVersion:      releaseVersion,
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

// ParamsFromEnv is NewRenderParams with the images and release version from
// CNO's environment: the one place this package reads the environment.
func ParamsFromEnv(cfg Config, c Cluster) RenderParams {
	return NewRenderParams(cfg, c, os.Getenv(EnvHandlerImage), os.Getenv(EnvReleaseVersion))
}

// RenderData is the template data for p, by the keys bindata uses.
func RenderData(p RenderParams) render.RenderData {
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

// Render renders the kubernetes-nmstate manifests under manifestDir (CNO's
// bindata root) with CNO's renderer. It returns nil when d renders nothing,
// and only what KeptOnDisable names when d is off but restores those.
func Render(d Decision, p RenderParams, manifestDir string) ([]*unstructured.Unstructured, error) {
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

	data := RenderData(p)
	dir := filepath.Join(manifestDir, ManifestSubdir)
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
		labels[OwnerLabel] = Version
		obj.SetLabels(labels)
	}
	if !d.Enabled {
		objs = slices.DeleteFunc(objs, func(obj *unstructured.Unstructured) bool {
			return !KeptOnDisable(obj.GroupVersionKind().Group, obj.GetKind(), obj.GetName())
		})
	}
	return objs, nil
}
