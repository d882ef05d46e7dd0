package e2e

// Least privilege, pod security and network policy, shown against the real
// kube-apiserver: RBAC authorization (envtest's default, see
// TestSecurityRBACIsEnforced) and PodSecurity admission (on by default in
// kube-apiserver) are the server's own, not simulations.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const hostRBACManifest = "../../manifests/0000_70_cluster-network-operator_04_kubernetes-nmstate-host-rbac.yaml"

var (
	handlerUser = serviceAccountUser(nmstate.Namespace, "nmstate-handler")
	webhookUser = serviceAccountUser(nmstate.Namespace, "nmstate-webhook")
	metricsUser = serviceAccountUser(nmstate.Namespace, "nmstate-metrics")
	// hostUser is CNO's account, bound to the host ClusterRole by the manifest.
	hostUser = serviceAccountUser("openshift-network-operator", "cluster-network-operator")
	// baselineUser has no binding at all: what every service account may do.
	baselineUser = serviceAccountUser("nmstate-e2e-baseline", "nobody")
)

// resource is an API resource as RBAC and the URL name it.
type resource struct {
	group, version, plural, kind, sub string
}

func (r resource) status() resource { r.sub = "status"; return r }

func (r resource) String() string {
	s := r.plural
	if r.sub != "" {
		s += "/" + r.sub
	}
	if r.group != "" {
		s += "." + r.group
	}
	return s
}

var (
	nncps          = resource{"nmstate.io", "v1", "nodenetworkconfigurationpolicies", "NodeNetworkConfigurationPolicy", ""}
	nnces          = resource{"nmstate.io", "v1beta1", "nodenetworkconfigurationenactments", "NodeNetworkConfigurationEnactment", ""}
	nnss           = resource{"nmstate.io", "v1beta1", "nodenetworkstates", "NodeNetworkState", ""}
	nodes          = resource{"", "v1", "nodes", "Node", ""}
	pods           = resource{"", "v1", "pods", "Pod", ""}
	secrets        = resource{"", "v1", "secrets", "Secret", ""}
	configmaps     = resource{"", "v1", "configmaps", "ConfigMap", ""}
	namespaces     = resource{"", "v1", "namespaces", "Namespace", ""}
	events         = resource{"", "v1", "events", "Event", ""}
	daemonsets     = resource{"apps", "v1", "daemonsets", "DaemonSet", ""}
	crds           = resource{"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", ""}
	clusterroles   = resource{"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", ""}
	crbindings     = resource{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", ""}
	networksOper   = resource{"operator.openshift.io", "v1", "networks", "Network", ""}
	infrastructure = resource{"config.openshift.io", "v1", "infrastructures", "Infrastructure", ""}
	apiservers     = resource{"config.openshift.io", "v1", "apiservers", "APIServer", ""}
	mutatingHooks  = resource{"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", ""}
	users          = resource{"", "v1", "users", "User", ""}
)

// access is one request: who asks to do what, and whether RBAC must allow it.
type access struct {
	user      string
	verb      string // get list watch create update patch delete deletecollection, or an RBAC-only verb (use, escalate, bind, impersonate)
	res       resource
	namespace string
	name      string
	allowed   bool
}

func (a access) String() string {
	where := "cluster-wide"
	if a.namespace != "" {
		where = "in " + a.namespace
	}
	name := ""
	if a.name != "" {
		name = " " + a.name
	}
	return fmt.Sprintf("%s %s%s %s", a.verb, a.res, name, where)
}

func allow(user, verb string, r resource, namespace, name string) access {
	return access{user: user, verb: verb, res: r, namespace: namespace, name: name, allowed: true}
}

func deny(user, verb string, r resource, namespace, name string) access {
	return access{user: user, verb: verb, res: r, namespace: namespace, name: name}
}

// checkAccess asks the API server twice: a SelfSubjectAccessReview as the
// user, and, for REST verbs, the real request as the user, which must be
// refused with RBAC's 403 exactly when the review says no.
func (k *cluster) checkAccess(t *testing.T, a access) {
	t.Helper()
	cfg := k.impersonating(a.user)
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.namespace, Verb: a.verb, Group: a.res.group, Version: a.res.version,
			Resource: a.res.plural, Subresource: a.res.sub, Name: a.name,
		},
	}}
	require.NoError(t, k.clientFor(cfg).Create(k.ctx(), review), "SelfSubjectAccessReview for %s", a)
	assert.Equal(t, a.allowed, review.Status.Allowed, "%s: access review says allowed=%v (%s)", a, review.Status.Allowed, review.Status.Reason)

	if !slices.Contains([]string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}, a.verb) {
		return // RBAC-only verbs have no request of their own
	}
	code, body := k.request(t, cfg, a)
	if a.allowed {
		assert.NotEqual(t, http.StatusForbidden, code, "%s: the real request was refused: %s", a, body)
		return
	}
	require.Equal(t, http.StatusForbidden, code, "%s: the real request was not refused: %s", a, body)
	res := a.res.plural
	if a.res.sub != "" {
		res += "/" + a.res.sub
	}
	var status metav1.Status
	require.NoError(t, json.Unmarshal([]byte(body), &status), "%s: a 403 without a Status", a)
	assert.Contains(t, status.Message, fmt.Sprintf("cannot %s resource %q", a.verb, res), "%s: refused, but not by RBAC", a)
}

// request sends a's real request and returns the status code and body.
// Bodies are minimal: RBAC decides before the body is even decoded, so an
// allowed request may still fail validation (422), which is not a 403.
func (k *cluster) request(t *testing.T, cfg *rest.Config, a access) (int, string) {
	t.Helper()
	base, _, err := rest.DefaultServerUrlFor(cfg)
	require.NoError(t, err)
	path := "/api/" + a.res.version
	gv := a.res.version
	if a.res.group != "" {
		path = "/apis/" + a.res.group + "/" + a.res.version
		gv = a.res.group + "/" + a.res.version
	}
	if a.namespace != "" {
		path += "/namespaces/" + a.namespace
	}
	path += "/" + a.res.plural
	collection := path
	if a.name != "" {
		path += "/" + a.name
	}
	if a.res.sub != "" {
		path += "/" + a.res.sub
	}
	minimal := map[string]any{"apiVersion": gv, "kind": a.res.kind, "metadata": map[string]any{"name": a.name}}
	if a.namespace != "" {
		minimal["metadata"].(map[string]any)["namespace"] = a.namespace
	}

	var method, query, contentType string
	var body []byte
	switch a.verb {
	case "get":
		method = http.MethodGet
	case "list":
		method, path = http.MethodGet, collection
	case "watch":
		method, path, query = http.MethodGet, collection, "?watch=true&timeoutSeconds=1"
	case "create":
		method, path, contentType = http.MethodPost, collection, "application/json"
		body, err = json.Marshal(minimal)
		require.NoError(t, err)
	case "update":
		// The current object, as the admin reads it: an allowed update succeeds.
		method, contentType = http.MethodPut, "application/json"
		current := &unstructured.Unstructured{}
		current.SetAPIVersion(gv)
		current.SetKind(a.res.kind)
		if err := k.c.Get(k.ctx(), client.ObjectKey{Namespace: a.namespace, Name: a.name}, current); err == nil {
			body, err = json.Marshal(current.Object)
			require.NoError(t, err)
		} else {
			body, err = json.Marshal(minimal)
			require.NoError(t, err)
		}
	case "patch":
		method, contentType, body = http.MethodPatch, "application/merge-patch+json", []byte("{}")
	case "delete":
		method = http.MethodDelete
	case "deletecollection":
		method, path = http.MethodDelete, collection
	default:
		t.Fatalf("no request for verb %q", a.verb)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(k.ctx(), method, strings.TrimSuffix(base.String(), "/")+path+query, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := httpClient.Do(req)
	require.NoError(t, err, "%s", a)
	defer resp.Body.Close()
	if a.verb == "watch" && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "(watch stream)"
	}
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

// TestSecurityRBACIsEnforced: envtest's kube-apiserver runs with
// --authorization-mode=RBAC, so an account with no binding is refused. Every
// "denied" row below relies on this.
func TestSecurityRBACIsEnforced(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.checkAccess(t, deny(baselineUser, "list", secrets, "", ""))
	k.checkAccess(t, deny(baselineUser, "list", namespaces, "", ""))
	// ... and the admin the tests use is not subject to it.
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}}}
	require.NoError(t, k.c.Create(k.ctx(), review))
	assert.True(t, review.Status.Allowed, "the e2e admin is cluster-admin")
}

// TestSecurityOperands deploys everything the plugin renders on BareMetal HA
// and checks, as each operand's own service account, that it can do what it
// needs and nothing else; that pod security admits exactly what is rendered;
// and that the network policies leave only the webhook's and the metrics
// manager's ports open.
func TestSecurityOperands(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	objs := rendered(t, "", bareMetalHA)
	k.waitSnapshot(objs)

	// What the handler works on: a policy, a node, a secret that is none of
	// its business.
	k.createPolicy("bond0")
	require.NoError(t, k.c.Create(k.ctx(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/os": "linux"}}}))
	for _, ns := range []string{nmstate.Namespace, "default"} {
		require.NoError(t, k.c.Create(k.ctx(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "openshift-nmstate-webhook", Namespace: ns},
			StringData: map[string]string{"tls.key": "not a real key"}}))
	}

	// What the operands may do is proven against upstream's binary
	// (TestOperandsEnactPolicy, TestMetricsScrape: no 403 in the audit log,
	// every granted permission used or explained); these are what they must
	// not do.
	t.Run("handler may not", func(t *testing.T) {
		h := handlerUser
		ns := nmstate.Namespace
		for _, a := range []access{
			deny(h, "update", apiservers, "", "cluster"),
			deny(h, "patch", apiservers, "", "cluster"),
			deny(h, "get", infrastructure, "", "cluster"),
			deny(h, "patch", daemonsets, ns, nmstate.HandlerDaemonSet),
			deny(h, "get", namespaces, "", "kube-system"),
			deny(h, "list", namespaces, "", ""),
			deny(h, "create", events, "kube-system", ""),
			deny(h, "create", crbindings, "", ""),
			deny(h, "patch", clusterroles, "", "nmstate-handler"),
			deny(h, "use", resource{"security.openshift.io", "v1", "securitycontextconstraints", "", ""}, "", "anyuid"),
			deny(h, "impersonate", users, "", "system:admin"),
		} {
			t.Run(a.String(), func(t *testing.T) { k.checkAccess(t, a) })
		}
	})

	t.Run("webhook may not", func(t *testing.T) {
		w := webhookUser
		ns := nmstate.Namespace
		for _, a := range []access{
			deny(w, "update", apiservers, "", "cluster"),
			deny(w, "patch", apiservers, "", "cluster"),
			deny(w, "delete", apiservers, "", "cluster"),
			deny(w, "create", apiservers, "", "other"),
			deny(w, "get", infrastructure, "", "cluster"),
			deny(w, "list", nncps, "", ""),
			deny(w, "get", nncps, "", "bond0"),
			deny(w, "watch", nncps, "", ""),
			deny(w, "patch", nncps.status(), "", "bond0"),
			// Its serving certificate is a mounted secret volume, not an API read.
			deny(w, "get", secrets, ns, "openshift-nmstate-webhook"),
			deny(w, "list", secrets, ns, ""),
			deny(w, "list", secrets, "", ""),
			deny(w, "list", pods, ns, ""),
			deny(w, "list", configmaps, ns, ""),
			deny(w, "get", nodes, "", "node-1"),
			deny(w, "create", events, ns, ""),
			deny(w, "patch", mutatingHooks, "", "nmstate"),
			deny(w, "get", namespaces, "", "default"),
		} {
			t.Run(a.String(), func(t *testing.T) { k.checkAccess(t, a) })
		}
	})

	t.Run("metrics manager may not", func(t *testing.T) {
		m := metricsUser
		ns := nmstate.Namespace
		for _, a := range []access{
			// Its controllers read from their caches: list and watch only.
			deny(m, "get", nncps, "", "bond0"),
			deny(m, "patch", nncps, "", "bond0"),
			deny(m, "delete", nncps, "", "bond0"),
			deny(m, "update", nncps.status(), "", "bond0"),
			deny(m, "create", nnces, "", ""),
			deny(m, "update", nnss, "", "node-1"),
			deny(m, "update", apiservers, "", "cluster"),
			deny(m, "patch", apiservers, "", "cluster"),
			deny(m, "get", infrastructure, "", "cluster"),
			// Its serving certificate is a mounted secret volume.
			deny(m, "get", secrets, ns, "openshift-nmstate-webhook"),
			deny(m, "list", secrets, "", ""),
			deny(m, "list", pods, ns, ""),
			deny(m, "list", configmaps, ns, ""),
			deny(m, "get", nodes, "", "node-1"),
			deny(m, "list", nodes, "", ""),
			deny(m, "create", events, ns, ""),
			deny(m, "get", namespaces, "", "default"),
			deny(m, "patch", daemonsets, ns, nmstate.HandlerDaemonSet),
			deny(m, "impersonate", users, "", "system:admin"),
		} {
			t.Run(a.String(), func(t *testing.T) { k.checkAccess(t, a) })
		}
	})

	t.Run("pod security admits exactly what is rendered", func(t *testing.T) {
		ds := &appsv1.DaemonSet{}
		require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
		dep := &appsv1.Deployment{}
		require.True(t, k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment))
		metrics := &appsv1.Deployment{}
		require.True(t, k.exists(metrics, nmstate.Namespace, nmstate.MetricsDeployment))
		ns := &corev1.Namespace{}
		require.True(t, k.exists(ns, "", nmstate.Namespace))
		assert.Equal(t, "privileged", ns.Labels["pod-security.kubernetes.io/enforce"], "the operands' namespace")

		for level, labels := range map[string]map[string]string{
			"restricted": {"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"},
			"baseline":   {"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"},
			// Shows that warnings are seen: the handler is admitted, with one.
			"warn": {"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/warn": "restricted"},
		} {
			require.NoError(t, k.c.Create(k.ctx(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nmstate-e2e-" + level, Labels: labels}}))
		}
		for _, tt := range []struct {
			name, namespace string
			template        corev1.PodTemplateSpec
			admitted        bool
			warned          bool
			// rejection names what pod security objected to.
			rejection []string
		}{
			{"handler in openshift-nmstate", nmstate.Namespace, ds.Spec.Template, true, false, nil},
			{"webhook in openshift-nmstate", nmstate.Namespace, dep.Spec.Template, true, false, nil},
			{"webhook in restricted", "nmstate-e2e-restricted", dep.Spec.Template, true, false, nil},
			{"webhook in baseline", "nmstate-e2e-baseline", dep.Spec.Template, true, false, nil},
			{"metrics in openshift-nmstate", nmstate.Namespace, metrics.Spec.Template, true, false, nil},
			{"metrics in restricted", "nmstate-e2e-restricted", metrics.Spec.Template, true, false, nil},
			{"handler in privileged, warn restricted", "nmstate-e2e-warn", ds.Spec.Template, true, true, nil},
			{"handler in restricted", "nmstate-e2e-restricted", ds.Spec.Template, false, false,
				[]string{`violates PodSecurity "restricted:latest"`, "host namespaces", "privileged", `restricted volume type "hostPath"`, "runAsNonRoot"}},
			{"handler in baseline", "nmstate-e2e-baseline", ds.Spec.Template, false, false,
				[]string{`violates PodSecurity "baseline:latest"`, "host namespaces", "privileged", "hostPath volumes"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				warnings := &warningRecorder{}
				cfg := rest.CopyConfig(k.cfg)
				cfg.WarningHandler = warnings
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: "probe-" + tt.template.Labels["name"], Namespace: tt.namespace,
						Labels: tt.template.Labels, Annotations: tt.template.Annotations},
					Spec: tt.template.Spec,
				}
				err := k.clientFor(cfg).Create(k.ctx(), pod)
				if tt.admitted {
					require.NoError(t, err)
					if tt.warned {
						assert.NotEmpty(t, warnings.podSecurity(), "a warning for a pod that is not restricted")
					} else {
						assert.Empty(t, warnings.podSecurity(), "pod security warnings (warn=restricted where set)")
					}
					return
				}
				require.Error(t, err, "pod security must reject it")
				assert.True(t, apierrors.IsForbidden(err), "a 403 from admission: %v", err)
				for _, s := range tt.rejection {
					assert.Contains(t, err.Error(), s)
				}
			})
		}
	})

	t.Run("only the handler is privileged; the webhook and the metrics manager are restricted", func(t *testing.T) {
		privileged := map[string]bool{}
		for _, obj := range objs {
			var spec *corev1.PodSpec
			switch obj.GetKind() {
			case "DaemonSet":
				ds := &appsv1.DaemonSet{}
				require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ds))
				spec = &ds.Spec.Template.Spec
			case "Deployment":
				dep := &appsv1.Deployment{}
				require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, dep))
				spec = &dep.Spec.Template.Spec
			default:
				continue
			}
			for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
				if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
					privileged[obj.GetKind()+"/"+obj.GetName()+"/"+c.Name] = true
				}
			}
			if spec.HostNetwork || spec.HostPID || spec.HostIPC {
				privileged[obj.GetKind()+"/"+obj.GetName()+" host namespaces"] = true
			}
		}
		assert.Equal(t, map[string]bool{
			"DaemonSet/nmstate-handler/nmstate-handler": true,
			"DaemonSet/nmstate-handler host namespaces": true,
		}, privileged, "only the handler is privileged")

		for _, name := range []string{nmstate.WebhookDeployment, nmstate.MetricsDeployment} {
			dep := &appsv1.Deployment{}
			require.True(t, k.exists(dep, nmstate.Namespace, name))
			pod := dep.Spec.Template.Spec
			assert.Equal(t, "restricted-v2", dep.Spec.Template.Annotations["openshift.io/required-scc"], name)
			require.NotNil(t, pod.SecurityContext, name)
			assert.Equal(t, ptr.To(true), pod.SecurityContext.RunAsNonRoot, "%s runAsNonRoot", name)
			require.NotNil(t, pod.SecurityContext.SeccompProfile, name)
			assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type, name)
			assert.False(t, pod.HostNetwork || pod.HostPID || pod.HostIPC, name)
			for _, v := range pod.Volumes {
				assert.Nil(t, v.HostPath, "%s: volume %s is a host path", name, v.Name)
			}
			for _, c := range pod.Containers {
				sc := c.SecurityContext
				require.NotNil(t, sc, c.Name)
				assert.Equal(t, ptr.To(false), sc.AllowPrivilegeEscalation, "%s allowPrivilegeEscalation", c.Name)
				assert.Equal(t, ptr.To(true), sc.ReadOnlyRootFilesystem, "%s readOnlyRootFilesystem", c.Name)
				assert.True(t, sc.Privileged == nil || !*sc.Privileged, "%s privileged", c.Name)
				require.NotNil(t, sc.Capabilities, c.Name)
				assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, "%s drops every capability", c.Name)
				assert.Empty(t, sc.Capabilities.Add, "%s adds none", c.Name)
				for _, m := range c.VolumeMounts {
					assert.True(t, m.ReadOnly, "%s mounts %s read-write", c.Name, m.Name)
				}
			}
		}
		ds := &appsv1.DaemonSet{}
		require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
		assert.Equal(t, "privileged", ds.Spec.Template.Annotations["openshift.io/required-scc"])
	})

	t.Run("network policies leave only the webhook's and the metrics manager's ports open", func(t *testing.T) {
		list := &networkingv1.NetworkPolicyList{}
		require.NoError(t, k.c.List(k.ctx(), list))
		for _, p := range list.Items {
			assert.Equal(t, nmstate.Namespace, p.Namespace, "a policy outside openshift-nmstate: %s", p.Name)
			assert.Equal(t, nmstate.PluginVersion, p.Labels[nmstate.OwnerLabel], "%s is not the plugin's", p.Name)
		}
		policies := list.Items

		// The default deny: every operand pod, both directions, no rule.
		var deny *networkingv1.NetworkPolicy
		for i := range policies {
			if policies[i].Name == "default-deny-labelled-operand" {
				deny = &policies[i]
			}
		}
		require.NotNil(t, deny, "no default-deny policy")
		assert.Equal(t, map[string]string{"app": "kubernetes-nmstate"}, deny.Spec.PodSelector.MatchLabels)
		assert.Empty(t, deny.Spec.PodSelector.MatchExpressions)
		assert.ElementsMatch(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, deny.Spec.PolicyTypes)
		assert.Empty(t, deny.Spec.Ingress)
		assert.Empty(t, deny.Spec.Egress)

		ds := &appsv1.DaemonSet{}
		require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
		dep := &appsv1.Deployment{}
		require.True(t, k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment))
		webhookPort := dep.Spec.Template.Spec.Containers[0].Ports[0]
		require.Equal(t, "webhook-server", webhookPort.Name)
		metrics := &appsv1.Deployment{}
		require.True(t, k.exists(metrics, nmstate.Namespace, nmstate.MetricsDeployment))
		metricsPort := metrics.Spec.Template.Spec.Containers[0].Ports[0]
		require.Equal(t, "metrics", metricsPort.Name)

		for _, tt := range []struct {
			name    string
			labels  map[string]string
			ingress []string
			egress  []string
		}{
			// "any" peers: the API server may call from the host network,
			// and the API and DNS endpoints are host-network on OpenShift.
			{"webhook", dep.Spec.Template.Labels, []string{fmt.Sprintf("TCP/%d from any", webhookPort.ContainerPort)},
				[]string{"TCP/6443 to any", "UDP/53 to any", "TCP/53 to any", "UDP/5353 to any", "TCP/5353 to any"}},
			// Only Prometheus' namespace may scrape it.
			{"metrics manager", metrics.Spec.Template.Labels,
				[]string{fmt.Sprintf(`TCP/%d from [{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"openshift-monitoring"}}}]`, metricsPort.ContainerPort)},
				[]string{"TCP/6443 to any"}},
			{"handler", ds.Spec.Template.Labels, nil, nil},
			{"any other operand pod", map[string]string{"app": "kubernetes-nmstate", "component": "kubernetes-nmstate-cert-manager"}, nil, nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				ingress := allowedTraffic(t, policies, tt.labels, networkingv1.PolicyTypeIngress)
				egress := allowedTraffic(t, policies, tt.labels, networkingv1.PolicyTypeEgress)
				require.NotNil(t, ingress, "no ingress policy selects the pod: ingress is open")
				require.NotNil(t, egress, "no egress policy selects the pod: egress is open")
				assert.ElementsMatch(t, tt.ingress, ingress)
				assert.ElementsMatch(t, tt.egress, egress)
			})
		}
		assert.Equal(t, int32(9443), webhookPort.ContainerPort)
		assert.Equal(t, int32(8443), metricsPort.ContainerPort)
	})
}

// allowedTraffic evaluates NetworkPolicy semantics for a pod with labels:
// nil when no policy of that direction selects it (all traffic allowed),
// otherwise the union of what the selecting policies' rules allow, as
// "PROTO/port from|to peer". A rule without ports is "all ports", a rule
// without peers is "any".
func allowedTraffic(t *testing.T, policies []networkingv1.NetworkPolicy, podLabels map[string]string, dir networkingv1.PolicyType) []string {
	t.Helper()
	var out []string
	selected := false
	for _, p := range policies {
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		require.NoError(t, err)
		if !sel.Matches(labels.Set(podLabels)) || !slices.Contains(p.Spec.PolicyTypes, dir) {
			continue
		}
		selected = true
		type rule struct {
			ports []networkingv1.NetworkPolicyPort
			peers []networkingv1.NetworkPolicyPeer
		}
		var rules []rule
		word := "from"
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range p.Spec.Ingress {
				rules = append(rules, rule{r.Ports, r.From})
			}
		} else {
			word = "to"
			for _, r := range p.Spec.Egress {
				rules = append(rules, rule{r.Ports, r.To})
			}
		}
		for _, r := range rules {
			peer := "any"
			if len(r.peers) > 0 {
				data, err := json.Marshal(r.peers)
				require.NoError(t, err)
				peer = string(data)
			}
			if len(r.ports) == 0 {
				out = append(out, "all ports "+word+" "+peer)
			}
			for _, port := range r.ports {
				proto := corev1.ProtocolTCP
				if port.Protocol != nil {
					proto = *port.Protocol
				}
				num := "all"
				if port.Port != nil {
					num = port.Port.String()
				}
				if port.EndPort != nil {
					num += fmt.Sprintf("-%d", *port.EndPort)
				}
				out = append(out, fmt.Sprintf("%s/%s %s %s", proto, num, word, peer))
			}
		}
	}
	if !selected {
		return nil
	}
	if out == nil {
		out = []string{}
	}
	return out
}

type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// podSecurity are the warnings from PodSecurity admission (others, such as
// deprecated label keys, are not about pod security).
func (w *warningRecorder) podSecurity() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, s := range w.seen {
		if strings.Contains(s, "PodSecurity") {
			out = append(out, s)
		}
	}
	return out
}

// forbiddenRecorder remembers every 403 a client got.
type forbiddenRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (f *forbiddenRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			f.seen = append(f.seen, req.Method+" "+req.URL.Path)
			f.mu.Unlock()
		}
		return resp, err
	})
}

func (f *forbiddenRecorder) get() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.seen...)
}

// TestSecurityHostClusterRole runs the host as CNO's service account bound
// to nothing but the ClusterRole in manifests/, through enable, adopt and
// disable, and checks that role against every object the plugin renders and
// against what it must never be able to do.
func TestSecurityHostClusterRole(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.applyHostRBAC()
	require.True(t, waitUntil(func() bool {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "watch", Group: "operator.openshift.io", Resource: "networks", Name: "cluster"}}}
		return k.clientFor(k.impersonating(hostUser)).Create(k.ctx(), review) == nil && review.Status.Allowed
	}), "the host ClusterRole never took effect: %s may still not watch networks.operator.openshift.io/cluster", hostUser)

	// Every object any configuration renders, by the resource RBAC sees.
	var everything []*unstructured.Unstructured
	for _, c := range []nmstate.Infrastructure{
		bareMetalHA,
		{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.SingleReplicaTopologyMode},
		{Platform: configv1.KubevirtPlatformType, ControlPlaneTopology: configv1.ExternalTopologyMode, InfrastructureTopology: ha},
	} {
		everything = append(everything, rendered(t, modeEnabled, c)...)
	}
	kept := map[string]bool{"CustomResourceDefinition": true, "Namespace": true}

	t.Run("may apply and prune every rendered object by name", func(t *testing.T) {
		seen := map[string]bool{}
		for _, obj := range everything {
			key := objectKey(obj.GetKind(), obj.GetNamespace(), obj.GetName())
			if seen[key] {
				continue
			}
			seen[key] = true
			gvk := obj.GroupVersionKind()
			mapping, err := k.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			require.NoError(t, err, "%s: no REST mapping", key)
			r := resource{gvk.Group, gvk.Version, mapping.Resource.Resource, gvk.Kind, ""}
			ns := obj.GetNamespace()
			rows := []access{
				allow(hostUser, "create", r, ns, obj.GetName()),
				allow(hostUser, "patch", r, ns, obj.GetName()),
				allow(hostUser, "list", r, "", ""),
				allow(hostUser, "watch", r, "", ""),
			}
			if kept[obj.GetKind()] || obj.GetKind() == "ClusterRole" && obj.GetName() == nmstate.ClusterReaderRole {
				rows = append(rows, deny(hostUser, "delete", r, ns, obj.GetName()))
			} else {
				rows = append(rows, allow(hostUser, "delete", r, ns, obj.GetName()))
			}
			for _, a := range rows {
				// SelfSubjectAccessReview only: the real requests are what
				// the host sends in the scenario below.
				review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.namespace, Verb: a.verb, Group: r.group,
						Version: r.version, Resource: r.plural, Name: a.name}}}
				require.NoError(t, k.clientFor(k.impersonating(hostUser)).Create(k.ctx(), review))
				assert.Equal(t, a.allowed, review.Status.Allowed, "%s on %s", a.verb, key)
			}
		}
		assert.GreaterOrEqual(t, len(seen), 23, "every rendered object was checked")
	})

	t.Run("may not", func(t *testing.T) {
		u := hostUser
		for _, a := range []access{
			deny(u, "get", secrets, nmstate.Namespace, "openshift-nmstate-webhook"),
			deny(u, "list", secrets, "", ""),
			deny(u, "list", secrets, nmstate.Namespace, ""),
			deny(u, "list", configmaps, "", ""),
			// Kept kinds: the CRDs hold users' policies.
			deny(u, "delete", crds, "", "nodenetworkconfigurationpolicies.nmstate.io"),
			deny(u, "deletecollection", crds, "", ""),
			deny(u, "delete", namespaces, "", nmstate.Namespace),
			// Kept too: whoever reads the kept policies through cluster-reader.
			deny(u, "delete", clusterroles, "", nmstate.ClusterReaderRole),
			deny(u, "delete", nncps, "", "bond0"),
			deny(u, "create", nncps, "", ""),
			// Nothing that is not the plugin's.
			deny(u, "patch", crds, "", "networks.operator.openshift.io"),
			deny(u, "create", crds, "", ""),
			deny(u, "patch", clusterroles, "", "cluster-admin"),
			deny(u, "delete", clusterroles, "", "cluster-admin"),
			deny(u, "patch", crbindings, "", "cluster-admin"),
			deny(u, "patch", daemonsets, "kube-system", "kube-proxy"),
			deny(u, "delete", namespaces, "", "default"),
			deny(u, "patch", mutatingHooks, "", "someone-elses-webhook"),
			deny(u, "create", pods, nmstate.Namespace, ""),
			// A POST has no name in its URL, so resourceNames never allow it:
			// the host creates by server-side apply only.
			deny(u, "create", crbindings, "", ""),
			deny(u, "create", resource{"apps", "v1", "daemonsets", "DaemonSet", ""}, nmstate.Namespace, ""),
			// Inputs are read-only, except its own status conditions.
			deny(u, "patch", networksOper, "", "cluster"),
			deny(u, "update", networksOper, "", "cluster"),
			deny(u, "get", networksOper, "", "other"),
			deny(u, "patch", infrastructure, "", "cluster"),
			deny(u, "patch", infrastructure.status(), "", "cluster"),
			// No shortcut around escalation prevention.
			deny(u, "escalate", clusterroles, "", "nmstate-handler"),
			deny(u, "bind", clusterroles, "", "cluster-admin"),
			deny(u, "impersonate", users, "", "system:admin"),
			deny(u, "impersonate", resource{"", "v1", "serviceaccounts", "ServiceAccount", ""}, nmstate.Namespace, "nmstate-handler"),
		} {
			t.Run(a.String(), func(t *testing.T) { k.checkAccess(t, a) })
		}
	})

	forbidden := &forbiddenRecorder{}
	cfg := k.impersonating(hostUser)
	cfg.WrapTransport = forbidden.wrap
	k.startHostWith(cfg)
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	objs := rendered(t, "", bareMetalHA)

	t.Run("enable on BareMetal", func(t *testing.T) {
		k.waitSnapshot(objs)
		k.waitOperandsSettled(6, 2)
		k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
		assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
		for _, obj := range objs {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			require.NoError(t, k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got))
			managed := false
			for _, f := range got.GetManagedFields() {
				managed = managed || f.Manager == controller.FieldManager
			}
			assert.True(t, managed, "%s was not applied by the host", obj.GetName())
		}
	})

	t.Run("cannot grant more than it holds", func(t *testing.T) {
		host := k.clientFor(k.impersonating(hostUser))
		// The handler's ClusterRole with one rule more than the host holds.
		role := &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "nmstate-handler"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
		}
		err := host.Patch(k.ctx(), role, client.Apply, client.FieldOwner("e2e-escalation"), client.ForceOwnership)
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), "not currently held")
		// A binding the host may create by name, pointed at cluster-admin.
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "nmstate-handler-events", Namespace: "kube-system"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "cluster-network-operator", Namespace: "openshift-network-operator"}},
		}
		// Applied, as the host does: a POST has no name in its URL, so a
		// create restricted to resourceNames is only ever allowed by apply.
		binding.TypeMeta = metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}
		err = host.Patch(k.ctx(), binding, client.Apply, client.FieldOwner("e2e-escalation"))
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), "not currently held")
		// A binding to the handler's ClusterRole is allowed: the host holds its rules.
		binding.Name = "nmstate-handler"
		binding.RoleRef = rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "nmstate-handler"}
		require.NoError(t, host.Patch(k.ctx(), binding, client.Apply, client.FieldOwner("e2e-escalation")), "a binding the host holds every permission of")
		require.NoError(t, host.Delete(k.ctx(), binding))
		// The handler's ClusterRole is unchanged.
		got := &rbacv1.ClusterRole{}
		require.True(t, k.exists(got, "", "nmstate-handler"))
		for _, r := range got.Rules {
			assert.NotContains(t, r.Resources, "secrets")
		}
	})

	t.Run("disable prunes and keeps the CRDs and policies", func(t *testing.T) {
		for name := range policies {
			k.createPolicy(name)
		}
		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
		for _, obj := range objs {
			gvk := obj.GroupVersionKind()
			if nmstate.KeptOnDisable(gvk.Group, gvk.Kind, obj.GetName()) {
				continue
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			require.True(t, waitUntil(func() bool {
				return apierrors.IsNotFound(k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got))
			}), "%s was not pruned", obj.GetName())
		}
		k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
		c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
		assert.Contains(t, c.Message, "3 NodeNetworkConfigurationPolicies exist and are not enforced")
		for _, name := range nmstate.CRDNames() {
			assert.True(t, k.crdKept(name), name)
		}
		assert.True(t, k.exists(&corev1.Namespace{}, "", nmstate.Namespace))
		assert.True(t, k.exists(&rbacv1.ClusterRole{}, "", nmstate.ClusterReaderRole))
		assert.ElementsMatch(t, []string{"bond0", "vlan100", "br-ex2"}, nncpNames(t, k))

		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
		k.waitSnapshot(objs)
	})

	// Every request the host sent was allowed: nothing in the ClusterRole is
	// missing, not even for a request that a retry papered over.
	assert.Empty(t, forbidden.get(), "requests the host was refused")
	t.Logf("the host ran as %s with only %s", hostUser, filepath.Base(hostRBACManifest))
}

// TestSecurityValidatingAdmissionPolicy: the rendered nncp-validation-policy,
// enforced by the real API server, admits and refuses what upstream's
// (kubernetes-nmstate v0.86.0) does. pkg/nmstate's
// TestRenderValidatingAdmissionPolicyIsUpstreams compares the expressions.
func TestSecurityValidatingAdmissionPolicy(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitSnapshot(rendered(t, "", bareMetalHA))

	// The API server enforces a new admission policy a moment after it is
	// stored: wait until a name only the policy refuses is refused.
	tooLong := strings.Repeat("a", 64)
	var err error
	require.True(t, waitUntil(func() bool {
		err = k.c.Create(k.ctx(), vapPolicy(tooLong, "eth1", nil))
		if err == nil {
			require.NoError(t, k.c.Delete(k.ctx(), vapPolicy(tooLong, "eth1", nil)))
		}
		return err != nil && strings.Contains(err.Error(), "invalid policy name")
	}), "the admission policy never took effect: %v", err)

	refusedBy := func(t *testing.T, err error, invalid bool, message string) {
		t.Helper()
		require.Error(t, err, "the admission policy must refuse it")
		assert.Contains(t, err.Error(), "ValidatingAdmissionPolicy 'nncp-validation-policy'")
		assert.Contains(t, err.Error(), message)
		if invalid {
			assert.True(t, apierrors.IsInvalid(err), "reason Invalid (422): %v", err)
		} else {
			assert.True(t, apierrors.IsForbidden(err), "reason Forbidden (403): %v", err)
		}
	}

	t.Run("create", func(t *testing.T) {
		err := k.c.Create(k.ctx(), vapPolicy(tooLong, "eth1", nil))
		refusedBy(t, err, true, "invalid policy name: "+tooLong)
		require.NoError(t, k.c.Create(k.ctx(), vapPolicy(strings.Repeat("a", 63), "eth1", nil)), "63 characters")
		require.NoError(t, k.c.Create(k.ctx(), vapPolicy("br.ex-2", "eth1", nil)), "dots")

		bad := vapPolicy("bad-selector", "eth1", nil)
		require.NoError(t, unstructured.SetNestedStringMap(bad.Object, map[string]string{"role": "not a label value!"}, "spec", "nodeSelector"))
		refusedBy(t, k.c.Create(k.ctx(), bad), true, "spec.nodeSelector values must be valid label values")
		good := vapPolicy("good-selector", "eth1", nil)
		require.NoError(t, unstructured.SetNestedStringMap(good.Object, map[string]string{"node-role.kubernetes.io/worker": ""}, "spec", "nodeSelector"))
		require.NoError(t, k.c.Create(k.ctx(), good))
	})

	// The handlers' condition sets, as upstream's pkg/policyconditions
	// writes them.
	cond := func(typ, status, reason string) map[string]any {
		c := map[string]any{"type": typ, "status": status}
		if reason != "" {
			c["reason"] = reason
		}
		return c
	}
	statuses := map[string][]any{
		"unknown": {cond("Available", "Unknown", ""), cond("Degraded", "Unknown", ""), cond("Progressing", "Unknown", ""), cond("Ignored", "Unknown", "")},
		"progressing": {cond("Available", "Unknown", "ConfigurationProgressing"), cond("Degraded", "Unknown", "ConfigurationProgressing"),
			cond("Progressing", "True", "ConfigurationProgressing"), cond("Ignored", "False", "ConfigurationProgressing")},
		"success": {cond("Available", "True", "SuccessfullyConfigured"), cond("Degraded", "False", "SuccessfullyConfigured"),
			cond("Progressing", "False", "SuccessfullyConfigured"), cond("Ignored", "False", "SuccessfullyConfigured")},
		"failed": {cond("Available", "False", "FailedToConfigure"), cond("Degraded", "True", "FailedToConfigure"),
			cond("Progressing", "False", "ConfigurationProgressing"), cond("Ignored", "False", "FailedToConfigure")},
		"no matching node": {cond("Available", "False", "NoMatchingNode"), cond("Degraded", "False", "NoMatchingNode"),
			cond("Progressing", "False", "NoMatchingNode"), cond("Ignored", "True", "NoMatchingNode")},
		"empty reason":        {map[string]any{"type": "Available", "status": "True", "reason": ""}},
		"no conditions":       {},
		"degraded only":       {cond("Degraded", "True", "FailedToConfigure")},
		"available no reason": {cond("Available", "True", "")},
	}
	// withStatus creates a policy and writes its status, as a handler does.
	n := 0
	withStatus := func(t *testing.T, status string, capture map[string]string) *unstructured.Unstructured {
		t.Helper()
		n++
		p := vapPolicy(fmt.Sprintf("update-%d", n), "eth1", capture)
		require.NoError(t, k.c.Create(k.ctx(), p))
		if status != "" {
			conditions, ok := statuses[status]
			require.True(t, ok, status)
			require.NoError(t, unstructured.SetNestedField(p.Object, map[string]any{"conditions": conditions}, "status"))
			require.NoError(t, k.c.Status().Update(k.ctx(), p))
		}
		require.NoError(t, k.c.Get(k.ctx(), client.ObjectKeyFromObject(p), p))
		return p
	}
	inProgress := "is still in progress"

	t.Run("spec change", func(t *testing.T) {
		for _, tt := range []struct {
			status  string // "": no status at all
			allowed bool
		}{
			{"", false},
			{"no conditions", false},
			{"unknown", false},
			{"available no reason", false},
			{"empty reason", false},
			{"progressing", false},
			{"degraded only", false},
			{"success", true},
			{"failed", true},
			{"no matching node", true},
		} {
			name := tt.status
			if name == "" {
				name = "no status"
			}
			t.Run(name, func(t *testing.T) {
				p := withStatus(t, tt.status, nil)
				setInterface(t, p, "eth2")
				err := k.c.Update(k.ctx(), p)
				if tt.allowed {
					require.NoError(t, err)
					return
				}
				refusedBy(t, err, false, "policy "+p.GetName()+" "+inProgress)
			})
		}
	})

	t.Run("metadata-only change of a policy in progress", func(t *testing.T) {
		for _, status := range []string{"", "progressing"} {
			p := withStatus(t, status, map[string]string{"gw": "routes.running.destination==\"0.0.0.0/0\""})
			p.SetLabels(map[string]string{"team": "net"})
			require.NoError(t, k.c.Update(k.ctx(), p), "status %q", status)
		}
	})

	t.Run("capture", func(t *testing.T) {
		gw := map[string]string{"gw": "routes.running.destination==\"0.0.0.0/0\""}
		other := map[string]string{"gw": "routes.running.destination==\"::/0\""}
		for _, tt := range []struct {
			name          string
			before, after map[string]string
			allowed       bool
		}{
			{"unchanged", gw, gw, true},
			{"both absent", nil, nil, true},
			{"added", nil, gw, false},
			{"removed", gw, nil, false},
			{"changed", gw, other, false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				p := withStatus(t, "success", tt.before)
				setInterface(t, p, "eth2")
				unstructured.RemoveNestedField(p.Object, "spec", "capture")
				if tt.after != nil {
					require.NoError(t, unstructured.SetNestedStringMap(p.Object, tt.after, "spec", "capture"))
				}
				err := k.c.Update(k.ctx(), p)
				if tt.allowed {
					require.NoError(t, err)
					return
				}
				refusedBy(t, err, true, "spec.capture cannot be modified")
			})
		}
	})
}

// vapPolicy is a policy that brings up one interface, with capture if given.
func vapPolicy(name, iface string, capture map[string]string) *unstructured.Unstructured {
	spec := map[string]any{"desiredState": map[string]any{"interfaces": []any{
		map[string]any{"name": iface, "type": "ethernet", "state": "up"}}}}
	if capture != nil {
		c := map[string]any{}
		for k, v := range capture {
			c[k] = v
		}
		spec["capture"] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// setInterface changes the policy's spec: it now brings up iface.
func setInterface(t *testing.T, p *unstructured.Unstructured, iface string) {
	t.Helper()
	require.NoError(t, unstructured.SetNestedSlice(p.Object, []any{
		map[string]any{"name": iface, "type": "ethernet", "state": "up"}}, "spec", "desiredState", "interfaces"))
}
