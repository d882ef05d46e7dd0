package nmstate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the operands' accounts are granted, rule by rule, in every topology.
// docs/security.md names the upstream (v0.86.0) code behind each rule;
// test/e2e/security_test.go shows the server enforcing them.
func TestRenderOperandRBAC(t *testing.T) {
	for name, c := range map[string]cluster{"ha": haCluster, "sno": snoCluster, "hosted": hostedCluster} {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, Config{Mode: ModeEnabled}, c)

			handler := typed[rbacv1.ClusterRole](t, objs, "ClusterRole", "", "nmstate-handler")
			assert.Contains(t, handler.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
				"handlers list handler pods in every namespace (pkg/node NodesRunningNmstate), with an uncached client")
			assert.Contains(t, handler.Rules, rbacv1.PolicyRule{APIGroups: []string{"config.openshift.io"}, Resources: []string{"apiservers"},
				ResourceNames: []string{"cluster"}, Verbs: []string{"get"}}, "the TLS profile read at start-up (pkg/cluster FetchOpenShiftTLSOpts)")

			role := typed[rbacv1.Role](t, objs, "Role", Namespace, "nmstate-handler")
			assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}}}, role.Rules,
				"pods are read cluster-wide, by the ClusterRole; the Role keeps events only")

			webhook := typed[rbacv1.ClusterRole](t, objs, "ClusterRole", "", "nmstate-webhook")
			assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"config.openshift.io"}, Resources: []string{"apiservers"},
				Verbs: []string{"get", "list", "watch"}}}, webhook.Rules, "the webhook reads and watches the TLS profile, and nothing else")

			metrics := typed[rbacv1.ClusterRole](t, objs, "ClusterRole", "", "nmstate-metrics")
			assert.Equal(t, []rbacv1.PolicyRule{
				{APIGroups: []string{"nmstate.io"}, Resources: []string{"nodenetworkconfigurationpolicies", "nodenetworkconfigurationenactments", "nodenetworkstates"},
					Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"config.openshift.io"}, Resources: []string{"apiservers"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
				{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
			}, metrics.Rules, "the metrics manager's caches, the TLS profile, and the reviews of its scrapers")

			for _, account := range []string{"nmstate-handler", "nmstate-webhook", "nmstate-metrics"} {
				binding := typed[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", "", account)
				assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: account}, binding.RoleRef)
				assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: account, Namespace: Namespace}}, binding.Subjects)
			}

			// Read-only on apiservers, and no review APIs but the metrics
			// manager's: the handler and the webhook run with metrics off, so
			// neither runs the metrics server's authn/authz filter.
			for _, o := range objs {
				if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
					continue
				}
				reviews := o.GetName() == "nmstate-metrics"
				var rules []rbacv1.PolicyRule
				if o.GetKind() == "Role" {
					rules = typed[rbacv1.Role](t, objs, o.GetKind(), o.GetNamespace(), o.GetName()).Rules
				} else {
					rules = typed[rbacv1.ClusterRole](t, objs, o.GetKind(), o.GetNamespace(), o.GetName()).Rules
				}
				for _, r := range rules {
					for _, g := range r.APIGroups {
						if !reviews {
							assert.NotContains(t, []string{"authentication.k8s.io", "authorization.k8s.io"}, g, "%s %s: %v", o.GetKind(), o.GetName(), r)
						}
						if g == "config.openshift.io" {
							assert.Subset(t, []string{"get", "list", "watch"}, r.Verbs, "%s %s writes config", o.GetKind(), o.GetName())
						}
					}
					assert.NotContains(t, r.Verbs, "*", "%s %s", o.GetKind(), o.GetName())
				}
			}
		})
	}
}

// Both binaries run with controller-runtime's metrics server off, and the
// handler, on the host network, declares no port.
func TestRenderMetricsOff(t *testing.T) {
	objs := mustRender(t, Config{}, haCluster)
	ds := typed[appsv1.DaemonSet](t, objs, "DaemonSet", Namespace, HandlerDaemonSet)
	dep := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment)
	require.True(t, ds.Spec.Template.Spec.HostNetwork)
	for name, containers := range map[string][]corev1.Container{"handler": ds.Spec.Template.Spec.Containers, "webhook": dep.Spec.Template.Spec.Containers} {
		require.Len(t, containers, 1, name)
		var found []corev1.EnvVar
		for _, e := range containers[0].Env {
			if e.Name == "METRICS_BIND_ADDRESS" {
				found = append(found, e)
			}
		}
		// Empty would mean upstream's default, :8089.
		assert.Equal(t, []corev1.EnvVar{{Name: "METRICS_BIND_ADDRESS", Value: "0"}}, found, name)
	}
	assert.Empty(t, ds.Spec.Template.Spec.Containers[0].Ports, "the handler opens no port on the node")
	var ports []int32
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		ports = append(ports, p.ContainerPort)
	}
	assert.Equal(t, []int32{9443}, ports, "the webhook serves admission only")
}

// upstreamVAP is the expressions of kubernetes-nmstate v0.86.0's
// nncp-validation-policy (deploy/handler/operator.yaml), in order. The
// rendered policy must have the same logic; only the messages are ours.
var upstreamVAP = []string{
	`request.operation != 'CREATE' ||
      (size(object.metadata.name) <= 63 &&
       (object.metadata.name == '' ||
        object.metadata.name.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')))`,
	`request.operation != 'UPDATE' ||
      object.spec == oldObject.spec ||
      (has(oldObject.status) && has(oldObject.status.conditions) &&
       oldObject.status.conditions.exists(c,
         c.type == 'Available' && has(c.reason) && c.reason != '' &&
         c.reason != 'ConfigurationProgressing'))`,
	`request.operation != 'UPDATE' ||
      object.spec == oldObject.spec ||
      ((!has(object.spec.capture) && !has(oldObject.spec.capture)) ||
       (has(object.spec.capture) && has(oldObject.spec.capture) &&
        object.spec.capture == oldObject.spec.capture))`,
	`!has(object.spec.nodeSelector) ||
      object.spec.nodeSelector.all(k,
        !format.labelValue().validate(object.spec.nodeSelector[k]).hasValue())`,
}

// withoutSpace drops all white space, which CEL ignores between tokens (no
// expression here has a space inside a string literal).
func withoutSpace(s string) string {
	return strings.Join(strings.Fields(s), "")
}

func TestRenderValidatingAdmissionPolicyIsUpstreams(t *testing.T) {
	objs := mustRender(t, Config{}, haCluster)
	vap := typed[admissionregv1.ValidatingAdmissionPolicy](t, objs, "ValidatingAdmissionPolicy", "", "nncp-validation-policy")
	require.Len(t, vap.Spec.Validations, len(upstreamVAP))
	for i, v := range vap.Spec.Validations {
		assert.Equal(t, withoutSpace(upstreamVAP[i]), withoutSpace(v.Expression), "validation %d", i)
		assert.True(t, v.Message != "" || v.MessageExpression != "", "validation %d has no message", i)
	}
	assert.Equal(t, admissionregv1.Fail, *vap.Spec.FailurePolicy)
	var reasons []metav1.StatusReason
	for _, v := range vap.Spec.Validations {
		require.NotNil(t, v.Reason)
		reasons = append(reasons, *v.Reason)
	}
	assert.Equal(t, []metav1.StatusReason{metav1.StatusReasonInvalid, metav1.StatusReasonForbidden, metav1.StatusReasonInvalid, metav1.StatusReasonInvalid},
		reasons, "upstream's reasons")

	binding := typed[admissionregv1.ValidatingAdmissionPolicyBinding](t, objs, "ValidatingAdmissionPolicyBinding", "", "nncp-validation-policy-binding")
	assert.Equal(t, "nncp-validation-policy", binding.Spec.PolicyName)
	assert.Equal(t, []admissionregv1.ValidationAction{admissionregv1.Deny}, binding.Spec.ValidationActions)
}
