package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/prune"
)

// A policy that uses one nmstate feature the metrics count
// (dhcpv4-custom-hostname), and one that nmstate refuses (an IPv4 prefix
// over 32), so that the policy and enactment status series have both an
// Available and a Degraded (Failing) member.
const (
	featurePolicy = `apiVersion: nmstate.io/v1
kind: NodeNetworkConfigurationPolicy
metadata:
  name: worker-0-dhcp-hostname
spec:
  nodeSelector:
    kubernetes.io/hostname: worker-0
  desiredState:
    interfaces:
    - name: dummy1
      type: dummy
      state: up
      ipv4:
        enabled: true
        dhcp: true
        dhcp-custom-hostname: worker-0-dummy1
`
	failingPolicy = `apiVersion: nmstate.io/v1
kind: NodeNetworkConfigurationPolicy
metadata:
  name: worker-0-bad-prefix
spec:
  nodeSelector:
    kubernetes.io/hostname: worker-0
  desiredState:
    interfaces:
    - name: dummy2
      type: dummy
      state: up
      ipv4:
        enabled: true
        address:
        - ip: 192.0.2.1
          prefix-length: 33
`
)

// TestMetricsScrape: the rendered metrics manager runs as upstream's binary
// (RUN_METRICS_MANAGER) from the pod the Deployment controller created,
// under its own rendered account, with the serving certificate the service
// CA stand-in signed for the rendered Service. The test scrapes it as
// OpenShift's Prometheus would, following the rendered ServiceMonitor: the
// Service's port, its EndpointSlice's address, HTTPS verified with the
// service CA bundle and the ServiceMonitor's serverName, and the bearer
// token of a stand-in prometheus-k8s. Scrapes without a token or with a
// token that may not get /metrics are refused; the scrape that is allowed
// has every series the recording rules and the alerts read, with the values
// the two policies imply. Every rendered object, the ServiceMonitor and the
// PrometheusRule included, is on the API server as rendered, and the audit
// log shows the metrics account used what it is granted and nothing else.
func TestMetricsScrape(t *testing.T) {
	started := time.Now()
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), auditLog: true})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)

	objs := rendered(t, "", bareMetalHA)
	k.waitSnapshot(objs)
	var sm, rule *unstructured.Unstructured
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupVersion() != prune.MonitoringGroupVersion {
			continue
		}
		// The generated CRDs' schemas keep every field the plugin sets: a
		// field they did not know would be pruned silently.
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		require.NoError(t, k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got))
		assert.Equal(t, obj.Object["spec"], got.Object["spec"], "%s %s as the API server holds it", obj.GetKind(), obj.GetName())
		switch obj.GetKind() {
		case "ServiceMonitor":
			sm = got
		case "PrometheusRule":
			rule = got
		}
	}
	require.NotNil(t, sm, "no ServiceMonitor rendered")
	require.NotNil(t, rule, "no PrometheusRule rendered")

	o := k.startOperands()
	prometheus := k.clusterMonitoringStandIn()
	handler := o.run(nmstate.HandlerDaemonSet, "worker-0")
	k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkState", "worker-0")
	for _, p := range []string{featurePolicy, failingPolicy} {
		out, err := k.kubectlApply(p)
		require.NoError(t, err, out)
	}
	k.waitPolicyCondition("worker-0-dhcp-hostname", "Available", "True")
	k.waitPolicyCondition("worker-0-bad-prefix", "Degraded", "True")
	requireRunning(t, handler)

	metrics := o.run(nmstate.MetricsDeployment, "")
	scrape := k.scrapeTarget(sm, prometheus.caPEM)
	t.Logf("scraping %s as the ServiceMonitor says", scrape.url)
	var code int
	var body string
	require.True(t, waitUntil(func() bool { code, body = scrape.get(t, ""); return code != 0 }),
		"the metrics server never answered: %s", body)

	for _, tt := range []struct {
		name, token string
		code        int
		body        string
	}{
		{"refused without a token", "", http.StatusUnauthorized, "Unauthorized"},
		// The API server's TokenReview of a malformed token carries an
		// error, which controller-runtime's filter answers with a 500.
		{"refused with a token the API server does not know", "not-a-token", http.StatusInternalServerError, "Authentication failed"},
		{"refused to an account that may not get /metrics", k.token("openshift-monitoring", "not-prometheus"), http.StatusForbidden,
			"Authorization denied for user system:serviceaccount:openshift-monitoring:not-prometheus"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := scrape.get(t, tt.token)
			assert.Equal(t, tt.code, code, body)
			assert.Contains(t, body, tt.body)
			assert.NotContains(t, body, "kubernetes_nmstate_")
		})
	}

	// The gauges are set as the manager's controllers reconcile: wait for
	// the values the two policies imply.
	want := map[string]float64{
		`kubernetes_nmstate_features_applied{name="dhcpv4-custom-hostname"}`:         1,
		`kubernetes_nmstate_network_interfaces{node="worker-0",type="loopback"}`:     1,
		`kubernetes_nmstate_policies_status{status="Available"}`:                     1,
		`kubernetes_nmstate_policies_status{status="Degraded"}`:                      1,
		`kubernetes_nmstate_enactments_status{node="worker-0",status="Available"}`:   1,
		`kubernetes_nmstate_enactments_status{node="worker-0",status="Failing"}`:     1,
		`kubernetes_nmstate_routes{ip_stack="ipv4",node="worker-0",type="dynamic"}`:  1,
		`kubernetes_nmstate_enactments_status{node="worker-0",status="Progressing"}`: 0,
		`kubernetes_nmstate_policies_status{status="Progressing"}`:                   0,
	}
	var series map[string]float64
	var families map[string]*dto.MetricFamily
	ok := waitUntil(func() bool {
		code, body = scrape.get(t, prometheus.token)
		if code != http.StatusOK {
			return false
		}
		families, series = parseMetrics(t, body)
		for s, v := range want {
			if got, found := series[s]; !found || got != v {
				return false
			}
		}
		return true
	})
	require.Equal(t, http.StatusOK, code, body)
	require.True(t, ok, "the scrape never had %v; nmstate series:\n%s", want, nmstateSeries(series))

	// Every series a rule reads is scraped.
	for _, name := range ruleInputs(t, rule) {
		if strings.HasPrefix(name, "kube_") {
			continue // kube-state-metrics', not the manager's
		}
		assert.Contains(t, families, name, "a rule reads %s, which the scrape lacks", name)
	}
	nmstateCount := len(strings.Split(strings.TrimSpace(nmstateSeries(series)), "\n"))
	t.Logf("scraped %d metric families, %d series, %d of them kubernetes_nmstate_*; in %s since the cluster started",
		len(families), len(series), nmstateCount, time.Since(started).Round(time.Second))
	t.Logf("kubernetes_nmstate_* series:\n%s", nmstateSeries(series))
	t.Logf("metrics manager RSS: %s", rss(t, metrics.Pid()))

	requireRunning(t, metrics)
	requireRunning(t, handler)
	k.requireOperandRBACFromAudit(nmstate.MetricsDeployment)
}

// monitoring is the cluster-monitoring stand-in's Prometheus identity.
type monitoring struct {
	token string
	caPEM []byte
}

// clusterMonitoringStandIn is the stand-in for OpenShift's
// cluster-monitoring operator, which a real cluster runs: the account
// prometheus-k8s in openshift-monitoring with the permission OpenShift
// gives it to get /metrics (its ClusterRole prometheus-k8s has that
// nonResourceURL rule, among others the scrape does not need), and the
// ConfigMap serving-certs-ca-bundle the service CA injects its bundle into,
// which Prometheus mounts as the ServiceMonitor's caFile. It also creates an
// account without the permission.
func (k *cluster) clusterMonitoringStandIn() monitoring {
	k.t.Helper()
	ctx := k.ctx()
	const ns = "openshift-monitoring"
	require.NoError(k.t, k.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	for _, sa := range []string{"prometheus-k8s", "not-prometheus"} {
		require.NoError(k.t, k.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}))
	}
	require.NoError(k.t, k.c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-k8s"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}))
	require.NoError(k.t, k.c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-k8s"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "prometheus-k8s"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: ns}}}))
	bundle := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serving-certs-ca-bundle", Namespace: ns,
		Annotations: map[string]string{"service.beta.openshift.io/inject-cabundle": "true"}}}
	require.NoError(k.t, k.c.Create(ctx, bundle))
	// The service CA stand-in (startOperands) injects the bundle.
	require.True(k.t, waitUntil(func() bool {
		require.NoError(k.t, k.c.Get(ctx, client.ObjectKeyFromObject(bundle), bundle))
		return bundle.Data["service-ca.crt"] != ""
	}), "the service CA never injected its bundle into %s/%s", ns, bundle.Name)
	return monitoring{token: k.token(ns, "prometheus-k8s"), caPEM: []byte(bundle.Data["service-ca.crt"])}
}

// token is a token of the service account, as a pod of it would have.
func (k *cluster) token(namespace, name string) string {
	k.t.Helper()
	cs, err := kubernetes.NewForConfig(k.cfg)
	require.NoError(k.t, err)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(k.ctx(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	require.NoError(k.t, err)
	return tr.Status.Token
}

// target is where and how the ServiceMonitor says to scrape.
type target struct {
	url    string
	client *http.Client
}

// scrapeTarget resolves the ServiceMonitor's endpoint as prometheus-operator
// does: the Service it selects, that Service's port of the endpoint's name,
// and a ready address of the Service's EndpointSlice with that port. The
// address must be one only this test's network namespace has (the pod
// range is routed to lo there, RunIsolated). TLS is verified with the CA
// bundle and the serverName the ServiceMonitor names.
func (k *cluster) scrapeTarget(sm *unstructured.Unstructured, caPEM []byte) target {
	k.t.Helper()
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	require.Len(k.t, endpoints, 1)
	ep := endpoints[0].(map[string]any)
	portName, _, _ := unstructured.NestedString(ep, "port")
	scheme, _, _ := unstructured.NestedString(ep, "scheme")
	serverName, _, _ := unstructured.NestedString(ep, "tlsConfig", "serverName")
	require.Equal(k.t, "https", scheme)
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")

	svcs := &corev1.ServiceList{}
	require.NoError(k.t, k.c.List(k.ctx(), svcs, client.InNamespace(nmstate.Namespace), client.MatchingLabels(selector)))
	require.Len(k.t, svcs.Items, 1, "the ServiceMonitor selects one Service")
	svc := svcs.Items[0]
	require.Equal(k.t, nmstate.MetricsService, svc.Name)
	found := false
	for _, p := range svc.Spec.Ports {
		found = found || p.Name == portName
	}
	require.True(k.t, found, "Service %s has no port %q", svc.Name, portName)

	var addr string
	require.True(k.t, waitUntil(func() bool {
		slices := &discoveryv1.EndpointSliceList{}
		require.NoError(k.t, k.c.List(k.ctx(), slices, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}))
		for _, s := range slices.Items {
			for _, p := range s.Ports {
				if ptr.Deref(p.Name, "") != portName || p.Port == nil {
					continue
				}
				for _, e := range s.Endpoints {
					if ptr.Deref(e.Conditions.Ready, false) && len(e.Addresses) > 0 {
						addr = net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*p.Port)))
						return true
					}
				}
			}
		}
		return false
	}), "Service %s never had a ready endpoint on port %q", svc.Name, portName)

	host, _, err := net.SplitHostPort(addr)
	require.NoError(k.t, err)
	route, err := exec.Command("ip", "route", "get", host).CombinedOutput()
	require.NoError(k.t, err, "%s", route)
	require.Regexp(k.t, `^local \S+ dev lo `, string(route), "the endpoint %s must be local to this test's network namespace", host)

	pool := x509.NewCertPool()
	require.True(k.t, pool.AppendCertsFromPEM(caPEM), "the service CA bundle holds no certificate")
	return target{
		url: scheme + "://" + addr + "/metrics",
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12},
		}},
	}
}

// get scrapes the target with the bearer token ("" for none).
func (tg target) get(t *testing.T, token string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tg.url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// parseMetrics parses the text exposition format with Prometheus' own
// parser, into families by name and every sample by its series,
// `name{label="value",...}` with the labels sorted.
func parseMetrics(t *testing.T, body string) (map[string]*dto.MetricFamily, map[string]float64) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	series := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetGauge() != nil:
				series[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				series[key] = m.GetCounter().GetValue()
			case m.GetUntyped() != nil:
				series[key] = m.GetUntyped().GetValue()
			default:
				series[key] = 0 // histograms and summaries: present is enough here
			}
		}
	}
	return families, series
}

var metricName = regexp.MustCompile(`\b(?:kubernetes_nmstate|kube)_[a-z_]+\b`)

// ruleInputs are the metric names the PrometheusRule's expressions read.
func ruleInputs(t *testing.T, rule *unstructured.Unstructured) []string {
	t.Helper()
	groups, _, err := unstructured.NestedSlice(rule.Object, "spec", "groups")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			expr, _ := r.(map[string]any)["expr"].(string)
			for _, name := range metricName.FindAllString(expr, -1) {
				seen[name] = true
			}
		}
	}
	var out []string
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	require.NotEmpty(t, out)
	return out
}

// rss is the process's resident set size, as /proc says.
func rss(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "unknown"
}

// nmstateSeries lists the kubernetes_nmstate_* series with their values.
func nmstateSeries(series map[string]float64) string {
	var out []string
	for s, v := range series {
		if strings.HasPrefix(s, "kubernetes_nmstate_") {
			out = append(out, fmt.Sprintf("%s %g", s, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
