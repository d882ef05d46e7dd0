package nmstate

import "slices"

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

	// manifestSubdir is where the templates live under CNO's bindata root.
	manifestSubdir = "network/kubernetes-nmstate"

	// OwnerLabel marks every rendered object; its value is PluginVersion.
	// Objects with the label that a release no longer renders are pruned by
	// it.
	OwnerLabel = "networkoperator.openshift.io/kubernetes-nmstate"
	// PluginVersion is the value of OwnerLabel: this plugin's version, not
	// kubernetes-nmstate's (bindata.KubernetesNMStateVersion). Bump it when
	// the set of rendered objects changes.
	PluginVersion = "0.2.0"

	// EnvHandlerImage names the handler image in CNO's Deployment; the
	// webhook runs from the same image.
	EnvHandlerImage   = "KUBERNETES_NMSTATE_HANDLER_IMAGE"
	EnvReleaseVersion = "RELEASE_VERSION"

	linuxLabel = "kubernetes.io/os"
)

// PoliciesCRD is the CRD of the NodeNetworkConfigurationPolicies: whether
// the plugin's own exists says it deployed kubernetes-nmstate before.
const PoliciesCRD = "nodenetworkconfigurationpolicies.nmstate.io"

// HandlerOnAnnotation is on the plugin's PoliciesCRD while the last
// decision it carried out ran the handler: rendered then, and removed by the
// server-side apply of a decision that does not. It is the memory that keeps
// a handler kept for policies through failed syncs, restarts and a deleted
// DaemonSet or Namespace (State.HandlerOn): the CRD is never pruned, and
// outlives every policy it could keep enforced.
const HandlerOnAnnotation = "networkoperator.openshift.io/kubernetes-nmstate-handler-on"

// crdNames are the CRDs that hold users' policies, the policies' first.
var crdNames = []string{
	PoliciesCRD,
	"nodenetworkconfigurationenactments.nmstate.io",
	"nodenetworkstates.nmstate.io",
}

// CRDNames are the CRDs that hold users' policies, the policies' first.
// Disabling never removes them; CNO's status manager must list them in
// keepCRDs. A copy: no importer can change what the plugin keeps.
func CRDNames() []string { return slices.Clone(crdNames) }
