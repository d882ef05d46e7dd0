package nmstate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/cluster-network-operator/pkg/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

const manifestDir = "../../bindata"

var (
	haCluster = cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode, DefaultOnGate: true}
	snoCluster = cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.SingleReplicaTopologyMode,
		InfrastructureTopology: configv1.SingleReplicaTopologyMode, DefaultOnGate: true}
	hostedCluster = cluster{Platform: configv1.KubevirtPlatformType, ControlPlaneTopology: configv1.ExternalTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode, DefaultOnGate: true}
)

func mustRender(t *testing.T, cfg Config, c cluster) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderObjects(decide(cfg, c), newRenderParams(cfg, c, Images{Handler: "quay.io/openshift/origin-kubernetes-nmstate-handler:test", ReleaseVersion: "4.99.0"}), manifestDir)
	require.NoError(t, err)
	return objs
}

func findObj(t *testing.T, objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

func typed[T any](t *testing.T, objs []*unstructured.Unstructured, kind, namespace, name string) *T {
	t.Helper()
	u := findObj(t, objs, kind, namespace, name)
	require.NotNil(t, u, "%s %s/%s not rendered", kind, namespace, name)
	out := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true),
		"%s %s/%s does not match its Go type", kind, namespace, name)
	return out
}

func TestRenderBareMetalHA(t *testing.T) {
	objs := mustRender(t, Config{}, haCluster)

	for _, want := range []struct{ kind, ns, name string }{
		{"Namespace", "", Namespace},
		{"CustomResourceDefinition", "", "nodenetworkconfigurationpolicies.nmstate.io"},
		{"CustomResourceDefinition", "", "nodenetworkconfigurationenactments.nmstate.io"},
		{"CustomResourceDefinition", "", "nodenetworkstates.nmstate.io"},
		{"ServiceAccount", Namespace, "nmstate-handler"},
		{"ServiceAccount", Namespace, "nmstate-webhook"},
		{"ClusterRole", "", "nmstate-handler"},
		{"ClusterRoleBinding", "", "nmstate-handler"},
		{"ClusterRole", "", "nmstate-webhook"},
		{"ClusterRoleBinding", "", "nmstate-webhook"},
		{"Role", Namespace, "nmstate-handler"},
		{"RoleBinding", Namespace, "nmstate-handler"},
		{"DaemonSet", Namespace, HandlerDaemonSet},
		{"Deployment", Namespace, WebhookDeployment},
		{"Service", Namespace, "nmstate-webhook"},
		{"PodDisruptionBudget", Namespace, "nmstate-webhook"},
		{"MutatingWebhookConfiguration", "", "nmstate"},
		{"ValidatingAdmissionPolicy", "", "nncp-validation-policy"},
		{"ValidatingAdmissionPolicyBinding", "", "nncp-validation-policy-binding"},
		{"NetworkPolicy", Namespace, "default-deny-labelled-operand"},
		{"ClusterRole", "", ClusterReaderRole},
		{"NetworkPolicy", Namespace, "allow-metrics-ingress"},
		{"NetworkPolicy", Namespace, "allow-metrics-egress-api"},
		{"ServiceAccount", Namespace, "nmstate-metrics"},
		{"ClusterRole", "", "nmstate-metrics"},
		{"ClusterRoleBinding", "", "nmstate-metrics"},
		{"Deployment", Namespace, MetricsDeployment},
		{"Service", Namespace, MetricsService},
		{"ServiceMonitor", Namespace, "nmstate-metrics"},
		{"PrometheusRule", Namespace, "kubernetes-nmstate"},
		{"Role", Namespace, "prometheus-k8s"},
		{"RoleBinding", Namespace, "prometheus-k8s"},
	} {
		assert.NotNil(t, findObj(t, objs, want.kind, want.ns, want.name), "%s %s/%s not rendered", want.kind, want.ns, want.name)
	}
	for _, o := range objs {
		assert.Equal(t, PluginVersion, o.GetLabels()[OwnerLabel], "%s %s lacks the owner label", o.GetKind(), o.GetName())
		if o.GetNamespace() != "" {
			assert.Contains(t, []string{Namespace, "default"}, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
		}
	}

	ns := typed[corev1.Namespace](t, objs, "Namespace", "", Namespace)
	assert.Equal(t, "privileged", ns.Labels["pod-security.kubernetes.io/enforce"])
	assert.Equal(t, "true", ns.Labels["openshift.io/cluster-monitoring"])
	assert.Equal(t, "", ns.Annotations["openshift.io/node-selector"])
	assert.Contains(t, ns.Annotations, "openshift.io/node-selector")
	assert.Equal(t, "management", ns.Annotations["workload.openshift.io/allowed"])

	ds := typed[appsv1.DaemonSet](t, objs, "DaemonSet", Namespace, HandlerDaemonSet)
	assertCNOWorkload(t, ds.ObjectMeta.Annotations, ds.Labels, ds.Spec.Template.Annotations, "privileged")
	pod := ds.Spec.Template.Spec
	assert.True(t, pod.HostNetwork)
	assert.Equal(t, "system-node-critical", pod.PriorityClassName)
	assert.Equal(t, "kubernetes-nmstate-handler", ds.Spec.Template.Labels["component"], "handlers find their peers by this label")
	assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, pod.NodeSelector)
	assert.Equal(t, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, pod.Tolerations)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, "quay.io/openshift/origin-kubernetes-nmstate-handler:test", c.Image)
	require.NotNil(t, c.SecurityContext.Privileged)
	assert.True(t, *c.SecurityContext.Privileged)
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	assert.Equal(t, "/var/k8s_nmstate/handler_lock", env["NMSTATE_INSTANCE_NODE_LOCK_FILE"].Value)
	assert.Equal(t, "spec.nodeName", env["NODE_NAME"].ValueFrom.FieldRef.FieldPath)
	assert.Equal(t, "metadata.namespace", env["POD_NAMESPACE"].ValueFrom.FieldRef.FieldPath)
	for _, selector := range []string{"RUN_WEBHOOK_SERVER", "RUN_OPERATOR", "RUN_CERT_MANAGER", "RUN_METRICS_MANAGER"} {
		assert.NotContains(t, env, selector, "the handler runs only when no component variable is set")
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		require.NotNil(t, v.HostPath, "volume %s", v.Name)
		hostPaths[v.Name] = v.HostPath.Path
	}
	for _, path := range []string{"/run/dbus/system_bus_socket", "/var/k8s_nmstate", "/run/openvswitch", "/etc/systemd/network"} {
		assert.Contains(t, mounts, nameOf(hostPaths, path), "host path %s is not mounted", path)
	}
	require.NotNil(t, ds.Spec.UpdateStrategy.RollingUpdate)
	assert.Equal(t, "10%", ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable.String())

	webhook := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment)
	assertCNOWorkload(t, webhook.Annotations, webhook.Labels, webhook.Spec.Template.Annotations, "restricted-v2")
	require.NotNil(t, webhook.Spec.Replicas)
	assert.EqualValues(t, 2, *webhook.Spec.Replicas)
	assert.Len(t, webhook.Spec.Template.Spec.TopologySpreadConstraints, 1)
	assert.NotEmpty(t, webhook.Spec.Template.Spec.Tolerations, "the webhook prefers the control plane")
	wc := webhook.Spec.Template.Spec.Containers[0]
	assert.Contains(t, envNames(wc.Env), "RUN_WEBHOOK_SERVER")
	assert.Equal(t, c.Image, wc.Image, "the webhook runs from the handler image")
	assert.Equal(t, "openshift-nmstate-webhook", webhook.Spec.Template.Spec.Volumes[0].Secret.SecretName)

	svc := typed[corev1.Service](t, objs, "Service", Namespace, "nmstate-webhook")
	assert.Equal(t, "openshift-nmstate-webhook", svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"])
	mwc := typed[admissionregv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration", "", "nmstate")
	assert.Equal(t, "true", mwc.Annotations["service.beta.openshift.io/inject-cabundle"])
	for _, w := range mwc.Webhooks {
		assert.Equal(t, admissionregv1.Ignore, *w.FailurePolicy, w.Name)
		assert.Equal(t, "nmstate-webhook", w.ClientConfig.Service.Name)
	}
	pdb := findObj(t, objs, "PodDisruptionBudget", Namespace, "nmstate-webhook")
	minAvailable, _, _ := unstructured.NestedInt64(pdb.Object, "spec", "minAvailable")
	assert.EqualValues(t, 1, minAvailable)
}

func nameOf(m map[string]string, value string) string {
	for k, v := range m {
		if v == value {
			return k
		}
	}
	return ""
}

func envNames(env []corev1.EnvVar) []string {
	var names []string
	for _, e := range env {
		names = append(names, e.Name)
	}
	return names
}

// assertCNOWorkload checks the conventions CNO's status manager relies on.
func assertCNOWorkload(t *testing.T, annotations, labels, podAnnotations map[string]string, scc string) {
	t.Helper()
	assert.Equal(t, "4.99.0", annotations["release.openshift.io/version"])
	assert.Contains(t, annotations, "networkoperator.openshift.io/non-critical")
	assert.Equal(t, "stand-alone", labels["networkoperator.openshift.io/generates-operator-status"])
	assert.Equal(t, scc, podAnnotations["openshift.io/required-scc"])
	assert.Equal(t, `{"effect": "PreferredDuringScheduling"}`, podAnnotations["target.workload.openshift.io/management"])
}

func TestEveryContainerHasRequests(t *testing.T) {
	for name, c := range map[string]cluster{"ha": haCluster, "sno": snoCluster, "hosted": hostedCluster} {
		objs := mustRender(t, Config{Mode: ModeEnabled}, c)
		found := 0
		for _, o := range objs {
			var spec *corev1.PodSpec
			switch o.GetKind() {
			case "DaemonSet":
				spec = &typed[appsv1.DaemonSet](t, objs, o.GetKind(), o.GetNamespace(), o.GetName()).Spec.Template.Spec
			case "Deployment":
				spec = &typed[appsv1.Deployment](t, objs, o.GetKind(), o.GetNamespace(), o.GetName()).Spec.Template.Spec
			default:
				continue
			}
			for _, ctr := range append(spec.InitContainers, spec.Containers...) {
				found++
				assert.False(t, ctr.Resources.Requests.Cpu().IsZero(), "%s: %s %s container %s has no CPU request", name, o.GetKind(), o.GetName(), ctr.Name)
				assert.False(t, ctr.Resources.Requests.Memory().IsZero(), "%s: %s %s container %s has no memory request", name, o.GetKind(), o.GetName(), ctr.Name)
			}
		}
		assert.Equal(t, 3, found, name)
	}
}

func TestRenderSingleNode(t *testing.T) {
	objs := mustRender(t, Config{}, snoCluster)
	webhook := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment)
	assert.EqualValues(t, 1, *webhook.Spec.Replicas)
	assert.Empty(t, webhook.Spec.Template.Spec.TopologySpreadConstraints)
	assert.Nil(t, findObj(t, objs, "PodDisruptionBudget", Namespace, "nmstate-webhook"), "a PDB on one replica blocks every drain")
}

func TestRenderHostedControlPlane(t *testing.T) {
	objs := mustRender(t, Config{Mode: ModeEnabled}, hostedCluster)
	webhook := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment)
	assert.EqualValues(t, 2, *webhook.Spec.Replicas)
	assert.Empty(t, webhook.Spec.Template.Spec.Tolerations, "a hosted cluster has no control-plane nodes to tolerate")
	assert.Nil(t, webhook.Spec.Template.Spec.Affinity)
	assert.NotNil(t, findObj(t, objs, "PodDisruptionBudget", Namespace, "nmstate-webhook"))
}

// TestRenderKnobs: every setting of the Network lands where the standalone
// operator puts the NMState CR field it replaces.
func TestRenderKnobs(t *testing.T) {
	dedicated := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "net", Effect: corev1.TaintEffectNoSchedule}}
	rackAffinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"rack-1"}}}}}}}}
	infra := Placement{NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""}, Tolerations: dedicated, Affinity: rackAffinity}
	type knobCase struct {
		name    string
		cfg     Config
		cluster cluster
		check   func(t *testing.T, handler *corev1.PodSpec, webhook *corev1.PodSpec)
	}
	tests := []knobCase{{
		name: "defaults", cluster: haCluster,
		check: func(t *testing.T, h, w *corev1.PodSpec) {
			assert.Nil(t, h.Affinity)
			assert.Equal(t, []string{"--zap-time-encoding=iso8601"}, h.Containers[0].Args)
			assert.Equal(t, []string{"bash", "-c", "nmstatectl show lo 2>&1"}, h.Containers[0].LivenessProbe.Exec.Command)
			assert.Equal(t, "root-servers.net", envValue(h.Containers[0], "PROBE_DNS_HOST"))
			assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, w.NodeSelector)
			assert.Equal(t, []corev1.Toleration{
				{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			}, w.Tolerations)
			require.NotNil(t, w.Affinity)
			assert.Equal(t, "node-role.kubernetes.io/control-plane",
				w.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Key)
		},
	}, {
		name: "handler placement", cluster: haCluster,
		cfg: Config{Handler: Placement{NodeSelector: map[string]string{"node-role.kubernetes.io/worker": ""}, Tolerations: dedicated, Affinity: rackAffinity}},
		check: func(t *testing.T, h, w *corev1.PodSpec) {
			assert.Equal(t, map[string]string{"kubernetes.io/os": "linux", "node-role.kubernetes.io/worker": ""}, h.NodeSelector)
			assert.Equal(t, dedicated, h.Tolerations)
			assert.Equal(t, rackAffinity, h.Affinity)
			assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, w.NodeSelector, "the webhook is placed by infraPlacement only")
		},
	}, {
		name: "infra placement replaces the defaults", cluster: haCluster, cfg: Config{Infra: infra},
		check: func(t *testing.T, h, w *corev1.PodSpec) {
			assert.Equal(t, map[string]string{"kubernetes.io/os": "linux", "node-role.kubernetes.io/infra": ""}, w.NodeSelector)
			assert.Equal(t, dedicated, w.Tolerations)
			assert.Equal(t, rackAffinity, w.Affinity)
			assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, h.NodeSelector, "the handler is placed by handlerPlacement only")
		},
	}, {
		name: "infra placement with a hosted control plane", cluster: hostedCluster, cfg: Config{Infra: Placement{Tolerations: dedicated}},
		check: func(t *testing.T, h, w *corev1.PodSpec) {
			assert.Equal(t, dedicated, w.Tolerations)
			assert.Nil(t, w.Affinity, "no control plane to prefer")
		},
	}, {
		name: "probe DNS host", cluster: haCluster, cfg: Config{ProbeDNSHost: "dns.lab.example"},
		check: func(t *testing.T, h, w *corev1.PodSpec) {
			assert.Equal(t, "dns.lab.example", envValue(h.Containers[0], "PROBE_DNS_HOST"))
		},
	}, {
		name: "log level Normal", cluster: haCluster, cfg: Config{LogLevel: operv1.Normal},
		check: func(t *testing.T, h, w *corev1.PodSpec) {
			assert.Equal(t, []string{"--zap-time-encoding=iso8601"}, h.Containers[0].Args)
		},
	}}
	for _, level := range []operv1.LogLevel{operv1.Debug, operv1.Trace, operv1.TraceAll} {
		tests = append(tests, knobCase{name: "log level " + string(level), cluster: haCluster, cfg: Config{LogLevel: level},
			check: func(t *testing.T, h, w *corev1.PodSpec) {
				assert.Equal(t, []string{"--zap-time-encoding=iso8601", "--v", "debug"}, h.Containers[0].Args)
				assert.Equal(t, []string{"bash", "-c", "nmstatectl show -vv lo 2>&1"}, h.Containers[0].LivenessProbe.Exec.Command)
				assert.Equal(t, []string{"--zap-time-encoding=iso8601"}, w.Containers[0].Args, "the webhook has no debug level of its own")
			}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Mode = ModeEnabled
			objs := mustRender(t, tt.cfg, tt.cluster)
			ds := typed[appsv1.DaemonSet](t, objs, "DaemonSet", Namespace, HandlerDaemonSet)
			dep := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment)
			tt.check(t, &ds.Spec.Template.Spec, &dep.Spec.Template.Spec)
			metrics := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, MetricsDeployment).Spec.Template.Spec
			webhook := dep.Spec.Template.Spec
			assert.Equal(t, webhook.NodeSelector, metrics.NodeSelector, "infraPlacement places the metrics manager as the webhook")
			assert.Equal(t, webhook.Tolerations, metrics.Tolerations)
			assert.Equal(t, webhook.Affinity, metrics.Affinity)
		})
	}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func TestRenderDisabled(t *testing.T) {
	d := decide(Config{Mode: ModeDisabled}, haCluster)
	objs, err := renderObjects(d, newRenderParams(Config{}, haCluster, Images{Handler: "img", ReleaseVersion: "1"}), manifestDir)
	require.NoError(t, err)
	assert.Nil(t, objs)
}

// Off where it was installed: exactly what KeptOnDisable names, labelled as
// when on, and no image needed.
func TestRenderRestoreKept(t *testing.T) {
	c := haCluster
	c.Installed = true
	d := decide(Config{Mode: ModeDisabled}, c)
	require.True(t, d.RestoreKept)
	objs, err := renderObjects(d, newRenderParams(Config{}, c, Images{Handler: "", ReleaseVersion: "1"}), manifestDir)
	require.NoError(t, err)
	var got []string
	for _, obj := range objs {
		got = append(got, obj.GetKind()+" "+obj.GetName())
		assert.Equal(t, PluginVersion, obj.GetLabels()[OwnerLabel])
	}
	want := []string{"Namespace " + Namespace, "ValidatingAdmissionPolicy " + ValidationPolicy,
		"ValidatingAdmissionPolicyBinding " + ValidationPolicyBinding, "ClusterRole " + ClusterReaderRole,
		"ValidatingAdmissionPolicy " + CRDDeletionProtection, "ValidatingAdmissionPolicyBinding " + CRDDeletionProtection}
	for _, name := range crdNames {
		want = append(want, "CustomResourceDefinition "+name)
	}
	assert.ElementsMatch(t, want, got)
}

// The policies CRD carries HandlerOnAnnotation exactly while the decision
// runs the handler: rendered when on, left out when off, so that the
// server-side apply of an off decision removes it. The other CRDs never
// carry it.
func TestRenderHandlerOnAnnotation(t *testing.T) {
	c := haCluster
	c.Installed = true
	tests := []struct {
		name string
		mode Mode
		want map[string]string
	}{
		{"on", ModeEnabled, map[string]string{PoliciesCRD: "true"}},
		{"off, what is kept restored", ModeDisabled, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := renderObjects(decide(Config{Mode: tt.mode}, c), newRenderParams(Config{}, c, Images{Handler: "img", ReleaseVersion: "1"}), manifestDir)
			require.NoError(t, err)
			got := map[string]string{}
			for _, name := range crdNames {
				if v, ok := findObj(t, objs, "CustomResourceDefinition", "", name).GetAnnotations()[HandlerOnAnnotation]; ok {
					got[name] = v
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRenderMissingImage(t *testing.T) {
	d := decide(Config{}, haCluster)
	objs, err := renderObjects(d, newRenderParams(Config{}, haCluster, Images{Handler: "", ReleaseVersion: "1"}), manifestDir)
	require.Error(t, err)
	assert.Nil(t, objs)
	assert.Equal(t, ReasonMissingImage, ReasonOf(err))
	assert.Contains(t, err.Error(), EnvHandlerImage)
}

func TestImagesFromEnv(t *testing.T) {
	t.Setenv(EnvHandlerImage, "example.com/handler@sha256:abc")
	t.Setenv(EnvReleaseVersion, "4.99.1")
	assert.Equal(t, Images{Handler: "example.com/handler@sha256:abc", ReleaseVersion: "4.99.1"}, ImagesFromEnv())
}

func TestRenderBadManifestDir(t *testing.T) {
	d := decide(Config{}, haCluster)
	_, err := renderObjects(d, newRenderParams(Config{}, haCluster, Images{Handler: "img", ReleaseVersion: "1"}), t.TempDir())
	require.Error(t, err)

	// CNO's renderer turns an empty YAML document (a leading "---", or a
	// comment-only one) into an object without a kind; it must not reach apply.
	root := t.TempDir()
	dir := filepath.Join(root, manifestSubdir)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "000-x.yaml"), []byte("# note\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), 0o644))
	_, err = renderObjects(d, newRenderParams(Config{}, haCluster, Images{Handler: "img", ReleaseVersion: "1"}), root)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no kind or name")
}

func TestGeneratedCRDs(t *testing.T) {
	objs := mustRender(t, Config{}, haCluster)
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crd := typed[apiextensionsv1.CustomResourceDefinition](t, objs, o.GetKind(), "", o.GetName())
			crds[crd.Spec.Names.Kind] = crd
			assert.Equal(t, "nmstate.io", crd.Spec.Group)
			assert.Equal(t, apiextensionsv1.ClusterScoped, crd.Spec.Scope)
		}
	}
	require.Len(t, crds, 3)
	assert.NotContains(t, crds, "NMState", "the standalone operator's CRD is never rendered")

	nncp := crds["NodeNetworkConfigurationPolicy"]
	require.NotNil(t, nncp)
	versions := map[string]apiextensionsv1.CustomResourceDefinitionVersion{}
	for _, v := range nncp.Spec.Versions {
		versions[v.Name] = v
	}
	assert.True(t, versions["v1"].Storage, "v1 is the storage version")
	assert.True(t, versions["v1"].Served)
	assert.True(t, versions["v1beta1"].Served, "v1beta1 is still served")
	assert.False(t, versions["v1beta1"].Storage)
	assert.NotNil(t, versions["v1"].Subresources.Status)

	for _, kind := range []string{"NodeNetworkConfigurationEnactment", "NodeNetworkState"} {
		require.Contains(t, crds, kind)
		assert.NotEmpty(t, crds[kind].Spec.Versions)
	}
}

// BenchmarkRender compares Render, the whole call CNO makes, with CNO's
// RenderDir on the same bindata and data: Render's own cost is reading the
// config, the decision, validation and labelling. test/bench reports it in
// docs/resource-budget.md.
func BenchmarkRender(b *testing.B) {
	in := Input{Network: network(nil), Infrastructure: Infrastructure{Platform: haCluster.Platform,
		ControlPlaneTopology: haCluster.ControlPlaneTopology, InfrastructureTopology: haCluster.InfrastructureTopology}, DefaultOnGate: true,
		Images: Images{Handler: "img", ReleaseVersion: "4.99.0"}, ManifestDir: manifestDir}
	b.Run("Render", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if res := Render(in); res.Err != nil || len(res.Objects) == 0 {
				b.Fatal(res.Err, len(res.Objects))
			}
		}
	})
	b.Run("RenderDir", func(b *testing.B) {
		p := newRenderParams(Config{}, haCluster, in.Images)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			data := renderData(p)
			if _, err := render.RenderDir(filepath.Join(manifestDir, manifestSubdir), &data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The image comes from CNO's environment; YAML must not reinterpret it.
func TestRenderImageIsOneString(t *testing.T) {
	for _, image := range []string{`registry.example.com/a@sha256:0123`, `a\x41`, `x" injected: "y`, "line\nbreak"} {
		objs, err := renderObjects(decide(Config{}, haCluster), newRenderParams(Config{}, haCluster, Images{Handler: image, ReleaseVersion: `4.99 "rc"`}), manifestDir)
		require.NoError(t, err, image)
		ds := typed[appsv1.DaemonSet](t, objs, "DaemonSet", Namespace, HandlerDaemonSet)
		assert.Equal(t, image, ds.Spec.Template.Spec.Containers[0].Image)
		assert.Equal(t, `4.99 "rc"`, ds.Annotations["release.openshift.io/version"])
		webhook := typed[appsv1.Deployment](t, objs, "Deployment", Namespace, WebhookDeployment)
		assert.Equal(t, image, webhook.Spec.Template.Spec.Containers[0].Image)
	}
}

func TestKeptOnDisable(t *testing.T) {
	tests := []struct {
		group, kind, name string
		kept              bool
	}{
		{"apiextensions.k8s.io", "CustomResourceDefinition", "nodenetworkconfigurationpolicies.nmstate.io", true},
		{"apiextensions.k8s.io", "CustomResourceDefinition", "nodenetworkconfigurationenactments.nmstate.io", true},
		{"apiextensions.k8s.io", "CustomResourceDefinition", "nodenetworkstates.nmstate.io", true},
		{"apiextensions.k8s.io", "CustomResourceDefinition", "nmstates.nmstate.io", false},
		{"", "Namespace", "openshift-nmstate", true},
		{"", "Namespace", "openshift-network-operator", false},
		{"apps", "DaemonSet", "nmstate-handler", false},
		{"", "ServiceAccount", "openshift-nmstate", false},
		{"example.com", "CustomResourceDefinition", "nodenetworkstates.nmstate.io", false},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "nncp-validation-policy", true},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "nncp-validation-policy-binding", true},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "nncp-validation-policy-binding", false},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "nncp-validation-policy", false},
		{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "nncp-validation-policy", false},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", CRDDeletionProtection, true},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", CRDDeletionProtection, true},
		{"admissionregistration.k8s.io", "Namespace", "openshift-nmstate", false},
		{"", "ValidatingAdmissionPolicy", "nncp-validation-policy", false},
		{"rbac.authorization.k8s.io", "ClusterRole", "nmstate-cluster-reader", true},
		{"rbac.authorization.k8s.io", "ClusterRole", "nmstate-handler", false},
		{"rbac.authorization.k8s.io", "ClusterRoleBinding", "nmstate-cluster-reader", false},
		{"rbac.authorization.k8s.io", "Role", "nmstate-cluster-reader", false},
		{"", "ClusterRole", "nmstate-cluster-reader", false},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.name, func(t *testing.T) {
			assert.Equal(t, tt.kept, KeptOnDisable(tt.group, tt.kind, tt.name))
		})
	}
	// Every rendered object the predicate keeps is one of those above, and
	// every CRD, the admission policy, its binding, the reader role and the
	// Namespace are kept.
	for _, obj := range mustRender(t, Config{}, haCluster) {
		gvk := obj.GroupVersionKind()
		want := slices.Contains([]string{"CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Namespace"}, gvk.Kind) ||
			gvk.Kind == "ClusterRole" && obj.GetName() == ClusterReaderRole
		assert.Equal(t, want, KeptOnDisable(gvk.Group, gvk.Kind, obj.GetName()), "%s %s", gvk.Kind, obj.GetName())
	}
}
