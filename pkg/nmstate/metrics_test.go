package nmstate

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The metrics manager, its Service and the ServiceMonitor agree with each
// other: the Service selects the pod and targets its port by name, the
// serving certificate the service CA signs for the Service is what the pod
// mounts where controller-runtime's metrics server reads it, and the
// ServiceMonitor selects the Service and names it as the TLS server.
func TestRenderMetrics(t *testing.T) {
	for name, c := range map[string]cluster{"ha": haCluster, "sno": snoCluster, "hosted": hostedCluster} {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, Config{Mode: ModeEnabled}, c)
			dep := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, MetricsDeployment)
			assertCNOWorkload(t, dep.Annotations, dep.Labels, dep.Spec.Template.Annotations, "restricted-v2")
			require.NotNil(t, dep.Spec.Replicas)
			assert.EqualValues(t, 1, *dep.Spec.Replicas, "two replicas would double every sum")
			assert.Equal(t, appsv1.RecreateDeploymentStrategyType, dep.Spec.Strategy.Type)
			pod := dep.Spec.Template.Spec
			assert.Equal(t, "nmstate-metrics", pod.ServiceAccountName, "an account of its own, not the handler's")
			assert.Equal(t, "system-cluster-critical", pod.PriorityClassName)
			webhook := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment).Spec.Template.Spec
			assert.Equal(t, webhook.NodeSelector, pod.NodeSelector, "the infra placement, as the webhook's")
			assert.Equal(t, webhook.Tolerations, pod.Tolerations)
			assert.Equal(t, webhook.Affinity, pod.Affinity)
			assert.Equal(t, webhook.SecurityContext, pod.SecurityContext, "restricted-v2, as the webhook")
			require.Len(t, pod.Containers, 1)
			ctr := pod.Containers[0]
			assert.Equal(t, webhook.Containers[0].Image, ctr.Image, "upstream's image, the handler's")
			assert.Equal(t, webhook.Containers[0].SecurityContext, ctr.SecurityContext)
			env := map[string]string{}
			for _, e := range ctr.Env {
				env[e.Name] = e.Value
			}
			assert.Equal(t, map[string]string{"RUN_METRICS_MANAGER": "", "METRICS_BIND_ADDRESS": ":8443"}, env)
			require.Len(t, ctr.Ports, 1)
			assert.Equal(t, corev1.ContainerPort{Name: "metrics", ContainerPort: 8443, Protocol: corev1.ProtocolTCP}, ctr.Ports[0])
			require.Len(t, ctr.VolumeMounts, 1)
			assert.Equal(t, "/tmp/k8s-metrics-server/serving-certs", ctr.VolumeMounts[0].MountPath, "controller-runtime's default CertDir")
			require.Len(t, pod.Volumes, 1)
			require.NotNil(t, pod.Volumes[0].Secret)

			svc := typed[corev1.Service](t, objs, "Service", Namespace, MetricsService)
			assert.Equal(t, pod.Volumes[0].Secret.SecretName, svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"])
			assert.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)), "the Service selects the metrics pod")
			require.Len(t, svc.Spec.Ports, 1)
			assert.Equal(t, corev1.ServicePort{Name: "metrics", Port: 8443, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}, svc.Spec.Ports[0])

			sm := findObj(t, objs, "ServiceMonitor", Namespace, "nmstate-metrics")
			require.NotNil(t, sm)
			selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			assert.True(t, labels.SelectorFromSet(selector).Matches(labels.Set(svc.Labels)), "the ServiceMonitor selects the Service")
			namespaces, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
			assert.Equal(t, []string{Namespace}, namespaces)
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			require.Len(t, endpoints, 1)
			assert.Equal(t, map[string]any{
				"port": "metrics", "scheme": "https", "interval": "30s",
				"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
				"tlsConfig": map[string]any{
					"caFile":     "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt",
					"serverName": MetricsService + "." + Namespace + ".svc",
				},
			}, endpoints[0])

			prometheus := typed[rbacv1.RoleBinding](t, objs, "RoleBinding", Namespace, "prometheus-k8s")
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "openshift-monitoring"}}, prometheus.Subjects)
			role := typed[rbacv1.Role](t, objs, "Role", Namespace, prometheus.RoleRef.Name)
			assert.Equal(t, []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "pods"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
			}, role.Rules, "Prometheus discovers the targets, and reads nothing else")
		})
	}
}

// rule is one rule of the rendered PrometheusRule.
type rule struct {
	Record, Alert, Expr, For string
	Labels, Annotations      map[string]string
}

func renderedRules(t *testing.T) []rule {
	t.Helper()
	pr := findObj(t, mustRender(t, Config{}, haCluster), "PrometheusRule", Namespace, "kubernetes-nmstate")
	require.NotNil(t, pr, "no PrometheusRule rendered")
	assert.Equal(t, "k8s", pr.GetLabels()["prometheus"])
	assert.Equal(t, "alert-rules", pr.GetLabels()["role"])
	groups, _, err := unstructured.NestedSlice(pr.Object, "spec", "groups")
	require.NoError(t, err)
	var out []rule
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			m := r.(map[string]any)
			str := func(k string) string { s, _ := m[k].(string); return s }
			strs := func(k string) map[string]string {
				s, _, _ := unstructured.NestedStringMap(m, k)
				return s
			}
			out = append(out, rule{Record: str("record"), Alert: str("alert"), Expr: str("expr"), For: str("for"),
				Labels: strs("labels"), Annotations: strs("annotations")})
		}
	}
	return out
}

// The recording rules are upstream's (v0.86.0 deploy/handler/operator.yaml),
// expression for expression.
func TestRecordingRulesAreUpstreams(t *testing.T) {
	records := map[string]string{}
	for _, r := range renderedRules(t) {
		if r.Record != "" {
			records[r.Record] = r.Expr
		}
	}
	assert.Equal(t, map[string]string{
		"cluster:kubernetes_nmstate_features_applied:sum":   "sum by (name) (kubernetes_nmstate_features_applied)",
		"cluster:kubernetes_nmstate_network_interfaces:sum": "sum by (type) (kubernetes_nmstate_network_interfaces)",
		"cluster:kubernetes_nmstate_routes:sum":             "sum by (ip_stack, type) (kubernetes_nmstate_routes)",
	}, records)
}

var heading = regexp.MustCompile("(?m)^#+ (.+)$")

// anchor is the fragment GitHub gives a Markdown heading.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// Every alert follows OpenShift's alerting conventions (a severity, a
// summary and a description, a pending period) and links a runbook: its own
// section of docs/troubleshooting.md, which exists.
func TestAlertsHaveRunbooks(t *testing.T) {
	doc, err := os.ReadFile("../../docs/troubleshooting.md")
	require.NoError(t, err)
	anchors := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(doc), -1) {
		anchors[anchor(m[1])] = true
	}
	const base = "https://github.com/cno-nmstate/cno-nmstate/blob/main/docs/troubleshooting.md#"
	var alerts []string
	for _, r := range renderedRules(t) {
		if r.Alert == "" {
			continue
		}
		alerts = append(alerts, r.Alert)
		assert.Regexp(t, "^KubernetesNMState[A-Z][A-Za-z]+$", r.Alert, "CamelCase, prefixed with the component")
		assert.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], r.Alert)
		assert.NotEmpty(t, r.Annotations["summary"], r.Alert)
		assert.NotEmpty(t, r.Annotations["description"], r.Alert)
		assert.NotEmpty(t, r.For, "%s fires on the first evaluation", r.Alert)
		assert.Contains(t, r.Expr, "namespace", "%s keeps a namespace label", r.Alert)
		url := r.Annotations["runbook_url"]
		require.True(t, strings.HasPrefix(url, base), "%s: runbook %q is not in docs/troubleshooting.md", r.Alert, url)
		fragment := strings.TrimPrefix(url, base)
		assert.Equal(t, anchor("`"+r.Alert+"`"), fragment, "%s: its section is named after it", r.Alert)
		assert.True(t, anchors[fragment], "%s: docs/troubleshooting.md has no section #%s", r.Alert, fragment)
		assert.Equal(t, strings.Fields(r.Expr), strings.Fields(quotedExpr(t, string(doc), r.Alert)),
			"%s: the runbook quotes another expression than the rule's", r.Alert)
	}
	assert.ElementsMatch(t, []string{"KubernetesNMStatePolicyDegraded", "KubernetesNMStateHandlerNotReady"}, alerts)
}

// quotedExpr is the first promql code block of the alert's section.
func quotedExpr(t *testing.T, doc, alert string) string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n### `"+alert+"`\n")
	require.True(t, ok, "no section for %s", alert)
	_, block, ok := strings.Cut(section, "```promql\n")
	require.True(t, ok, "the section of %s quotes no expression", alert)
	expr, _, _ := strings.Cut(block, "```")
	return expr
}
