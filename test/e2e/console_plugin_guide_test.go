package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

const (
	userGuide          = "../../docs/user-guide.md"
	guidePluginSection = "### Deploy the plugin yourself"
	guidePluginNS      = "nmstate-console-plugin"
	guidePluginName    = "nmstate-console-plugin"
)

// The console CRDs of the pinned openshift/api module, as the Console
// capability installs them.
var consoleCRDs = []string{
	"console/v1/zz_generated.crd-manifests/90_consoleplugins.crd.yaml",
	"operator/v1/zz_generated.crd-manifests/0000_50_console_01_consoles.crd.yaml",
}

// TestUserGuideConsolePlugin runs the user guide's "Deploy the plugin
// yourself" as written: its YAML, its apply command and its console
// patches (kubectl standing in for oc), on the dev cluster with the
// ConsolePlugin and Console CRDs openshift/api ships. The plugin image and
// the console themselves are not run.
func TestUserGuideConsolePlugin(t *testing.T) {
	api := moduleDirOf(t, "github.com/openshift/api")
	var crds []string
	for _, p := range consoleCRDs {
		crds = append(crds, filepath.Join(api, p))
	}
	k := startCluster(t, clusterOption{nodes: devcluster.SingleNode(), extraCRDs: crds})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.SingleReplicaTopologyMode, configv1.SingleReplicaTopologyMode)
	ca, err := devcluster.NewServiceCA(k.c)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(k.ctx())
	t.Cleanup(cancel)
	go ca.Run(ctx, 200*time.Millisecond)

	section := guideSection(t, guidePluginSection)
	manifest := fencedBlocks(section, "yaml")
	require.Len(t, manifest, 1, "the section has one YAML block")
	shell := fencedBlocks(section, "sh")
	apply := blockContaining(t, shell, "oc apply")
	addPlugin := blockContaining(t, shell, `"path":"/spec/plugins/-"`)
	createList := blockContaining(t, shell, `"path":"/spec/plugins",`)

	// What CNO leaves on a cluster with the console: its own plugin on.
	console := consoleOperator(map[string]any{"managementState": "Managed", "plugins": []any{"networking-console-plugin"}})
	require.NoError(t, k.c.Create(k.ctx(), console))

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nmstate-console-plugin.yaml"), []byte(manifest[0]), 0o600))
	out, err := k.shellWithOC(dir, apply)
	require.NoError(t, err, "step 4:\n%s\n%s", apply, out)
	image := regexp.MustCompile(`(?m)^PLUGIN_IMAGE=(\S+)`).FindStringSubmatch(apply)
	require.Len(t, image, 2, "step 4 sets PLUGIN_IMAGE")

	t.Run("every object is accepted and applied", func(t *testing.T) {
		objs := decodeYAML(t, manifest[0])
		kinds := map[string]bool{}
		for _, obj := range objs {
			kinds[obj.GetKind()] = true
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			assert.NoError(t, k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got), "%s %s", obj.GetKind(), obj.GetName())
		}
		for _, kind := range []string{"Namespace", "ServiceAccount", "ConfigMap", "Deployment", "Service", "NetworkPolicy", "ConsolePlugin"} {
			assert.True(t, kinds[kind], "no %s in the guide's YAML", kind)
		}
		plugin := &unstructured.Unstructured{}
		plugin.SetAPIVersion("console.openshift.io/v1")
		plugin.SetKind("ConsolePlugin")
		require.NoError(t, k.c.Get(k.ctx(), client.ObjectKey{Name: guidePluginName}, plugin))
		name, _, _ := unstructured.NestedString(plugin.Object, "spec", "backend", "service", "name")
		namespace, _, _ := unstructured.NestedString(plugin.Object, "spec", "backend", "service", "namespace")
		assert.Equal(t, guidePluginName+"/"+guidePluginNS, name+"/"+namespace, "the ConsolePlugin's backend is the guide's Service")
	})

	t.Run("the service CA signs the Service's serving certificate", func(t *testing.T) {
		secret := &corev1.Secret{}
		k.waitExists(secret, guidePluginNS, "nmstate-console-plugin-cert")
		block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
		require.NotNil(t, block)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		assert.Contains(t, cert.DNSNames, guidePluginName+"."+guidePluginNS+".svc")
	})

	t.Run("the pod is scheduled and ready, with the chosen image", func(t *testing.T) {
		dep := &appsv1.Deployment{}
		require.True(t, k.exists(dep, guidePluginNS, guidePluginName))
		assert.Equal(t, image[1], dep.Spec.Template.Spec.Containers[0].Image)
		assert.Equal(t, int32(1), dep.Status.ReadyReplicas, "step 4's rollout status returned")
		pods := &corev1.PodList{}
		require.NoError(t, k.c.List(k.ctx(), pods, client.InNamespace(guidePluginNS)))
		require.Len(t, pods.Items, 1)
		assert.Equal(t, "sno-0", pods.Items[0].Spec.NodeName)
	})

	t.Run("the pod meets the restricted pod security standard", func(t *testing.T) {
		dep := &appsv1.Deployment{}
		require.True(t, k.exists(dep, guidePluginNS, guidePluginName))
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-restricted", Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}
		require.NoError(t, k.c.Create(k.ctx(), ns))
		// The pod runs as the namespace's default account, which the
		// service account controller creates a moment after the namespace.
		k.waitExists(&corev1.ServiceAccount{}, ns.Name, "default")
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plugin", Namespace: ns.Name}, Spec: dep.Spec.Template.Spec}
		pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount = "", ""
		warnings := &warningRecorder{}
		cfg := rest.CopyConfig(k.cfg)
		cfg.WarningHandler = warnings
		require.NoError(t, k.clientFor(cfg).Create(k.ctx(), pod, client.DryRunAll), "PodSecurity admission refused the guide's pod")
		assert.Empty(t, warnings.podSecurity(), "pod security warnings")
	})

	t.Run("the patch adds the plugin and keeps the others", func(t *testing.T) {
		out, err := k.shellWithOC(dir, addPlugin)
		require.NoError(t, err, "%s\n%s", addPlugin, out)
		assert.Equal(t, []any{"networking-console-plugin", guidePluginName}, k.consolePlugins())
	})

	t.Run("with no plugins, the list is created instead", func(t *testing.T) {
		require.NoError(t, k.c.Delete(k.ctx(), consoleOperator(nil)))
		require.NoError(t, k.c.Create(k.ctx(), consoleOperator(map[string]any{"managementState": "Managed"})))
		out, err := k.shellWithOC(dir, addPlugin)
		require.Error(t, err, "adding to a missing list must fail: %s", out)
		assert.Nil(t, k.consolePlugins())
		out, err = k.shellWithOC(dir, createList)
		require.NoError(t, err, "%s\n%s", createList, out)
		assert.Equal(t, []any{guidePluginName}, k.consolePlugins())
	})
}

func consoleOperator(spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "Console",
		"metadata": map[string]any{"name": "cluster"},
	}}
	if spec != nil {
		obj.Object["spec"] = spec
	}
	return obj
}

func (k *cluster) consolePlugins() []any {
	k.t.Helper()
	obj := consoleOperator(nil)
	require.NoError(k.t, k.c.Get(k.ctx(), client.ObjectKey{Name: "cluster"}, obj))
	plugins, _, _ := unstructured.NestedSlice(obj.Object, "spec", "plugins")
	return plugins
}

// shellWithOC runs a shell block of the guide in dir, with oc as the real
// kubectl against the dev cluster.
func (k *cluster) shellWithOC(dir, script string) (string, error) {
	kubectl := filepath.Join(assetsDir(k.t), "kubectl")
	prelude := "set -e\noc() { " + shellQuote(kubectl) + " --kubeconfig " + shellQuote(k.kubeconfig) + ` "$@"; }` + "\n"
	cmd := exec.Command("bash", "-c", prelude+script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// guideSection is the user guide from heading to the next heading of the
// same or a higher level.
func guideSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile(userGuide)
	require.NoError(t, err)
	text := string(data)
	start := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, start, 0, "no %q in %s", heading, userGuide)
	rest := text[start+1+len(heading):]
	level := strings.SplitN(heading, " ", 2)[0]
	if end := regexp.MustCompile(`\n#{1,` + string(rune('0'+len(level))) + `} `).FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	return rest
}

// fencedBlocks returns the bodies of the section's fenced blocks of the
// language, with the list item's indentation removed.
func fencedBlocks(section, lang string) []string {
	var blocks []string
	re := regexp.MustCompile("(?ms)^( *)```" + lang + "\n(.*?)^ *```\n")
	for _, m := range re.FindAllStringSubmatch(section, -1) {
		indent := m[1]
		var lines []string
		for _, line := range strings.SplitAfter(m[2], "\n") {
			lines = append(lines, strings.TrimPrefix(line, indent))
		}
		blocks = append(blocks, strings.Join(lines, ""))
	}
	return blocks
}

func blockContaining(t *testing.T, blocks []string, text string) string {
	t.Helper()
	for _, b := range blocks {
		if strings.Contains(b, text) {
			return b
		}
	}
	require.Failf(t, "no block", "no shell block with %q in the guide's section", text)
	return ""
}

func decodeYAML(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifest)), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			break
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	require.NotEmpty(t, objs)
	return objs
}

// moduleDirOf finds a pinned module on disk, as devcluster does for the
// CRDs it installs: the CRDs come from the module version go.mod pins.
func moduleDirOf(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	require.NoError(t, err, "go list -m %s", module)
	dir := strings.TrimSpace(string(out))
	require.NotEmpty(t, dir, "module %s is not downloaded", module)
	return dir
}
