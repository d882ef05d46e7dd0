package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

// TestMigrateCommand runs `cno-nmstate migrate` against a real API server
// (no nodes): with no NMState CRD, no CR, one CR and two.
func TestMigrateCommand(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = "../../bin"
	}
	require.FileExists(t, filepath.Join(assets, "kube-apiserver"), "run `make tools` first")
	cluster, err := devcluster.Start(devcluster.Options{AssetsDir: assets,
		NetworkCRD: "../../manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, cluster.Kubeconfig, 0o600))
	c, err := client.New(cluster.Config, client.Options{})
	require.NoError(t, err)
	ctx := t.Context()

	migrate := func(t *testing.T) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run([]string{"migrate", "-kubeconfig", kubeconfig}, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	failsWith := func(t *testing.T, want string) {
		t.Helper()
		code, stdout, stderr := migrate(t)
		assert.Equal(t, 1, code, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "cno-nmstate migrate: "+want)
	}

	t.Run("no NMState CRD", func(t *testing.T) {
		failsWith(t, "no NMState CR: the nmstate.io NMState CRD is not installed")
	})
	_, err = envtest.InstallCRDs(cluster.Config, envtest.CRDInstallOptions{Paths: []string{"../../test/e2e/testdata/crds/nmstate.io_nmstates.yaml"}})
	require.NoError(t, err)
	t.Run("no NMState CR", func(t *testing.T) {
		failsWith(t, "no NMState CR: the standalone operator has no settings to carry over")
	})

	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nmstate.io/v1", "kind": "NMState",
		"metadata": map[string]any{"name": "nmstate"},
		"spec": map[string]any{
			"nodeSelector":          map[string]any{"node-role.kubernetes.io/worker": ""},
			"logLevel":              "debug",
			"selfSignConfiguration": map[string]any{"caRotateInterval": "4380h0m0s"},
		}}}
	require.NoError(t, c.Create(ctx, cr))
	// The Network as it is: Trace is kept, the handler tolerations cleared.
	network := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operator.openshift.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": "cluster"},
		"spec": map[string]any{"logLevel": "Trace", "kubernetesNMState": map[string]any{
			"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Exists", "effect": "NoExecute"}}}}}}}
	require.NoError(t, c.Create(ctx, network))
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nmstate"}}))
	labels := map[string]string{"app": "kubernetes-nmstate-operator"}
	require.NoError(t, c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "nmstate", Name: "nmstate-operator", Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "quay.io/example/none:1"}}}}}}))

	t.Run("one NMState CR", func(t *testing.T) {
		code, stdout, stderr := migrate(t)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, `oc patch network.operator cluster --type=merge -p '{"spec":{"kubernetesNMState":{"handlerPlacement":{"nodeSelector":{"node-role.kubernetes.io/worker":""},"tolerations":null},"mode":"Enabled"}}}'`+"\n",
			stdout, "only the command on stdout")
		for _, want := range []string{
			"settings of NMState CR nmstate",
			// The CRD's default, filled in by the API server.
			`  - metricsConfiguration.bindAddress ":8089": the handler the Cluster Network Operator deploys serves no metrics port on the host network`,
			`  - selfSignConfiguration.caRotateInterval "4380h0m0s": OpenShift's service CA`,
			"  2. Carry the settings over:\n       oc patch network.operator cluster --type=merge -p '",
			"oc delete nmstates --all",
			"oc -n nmstate delete subscription <subscription-name>",
		} {
			assert.Contains(t, stderr, want)
		}
	})

	// Creation times count in seconds: "extra" must be the younger one
	// although it comes first by name.
	time.Sleep(time.Until(cr.GetCreationTimestamp().Add(time.Second)))
	second := cr.DeepCopy()
	second.SetName("extra")
	second.SetResourceVersion("")
	require.NoError(t, c.Create(ctx, second))
	t.Run("two NMState CRs", func(t *testing.T) {
		failsWith(t, "2 NMState CRs (nmstate, extra): the standalone operator honours only the oldest, nmstate")
	})
}
