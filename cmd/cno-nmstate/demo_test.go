package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo runs `cno-nmstate demo` end to end on the binaries `make tools`
// builds.
func TestDemo(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = "../../bin"
	}
	require.FileExists(t, filepath.Join(assets, "kube-apiserver"), "run `make tools` first")
	var stdout, stderr bytes.Buffer
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	code := run([]string{"demo", "-assets", assets, "-kubeconfig-out", kubeconfig,
		"-network-crd", "../../manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	out := stdout.String()
	for _, want := range []string{
		"decision: enabled=true reason=PlatformDefault",
		"DaemonSet openshift-nmstate/nmstate-handler",
		"handler DaemonSet: 6 of 6 scheduled pods ready; webhook Deployment: 2 of 2 replicas available",
		`windows-0  no handler: the handler's nodeSelector kubernetes.io/os=linux does not match the node's "windows"`,
		"$ oc get network.operator cluster -o yaml",
		"      reason: PlatformDefault\n      status: \"True\"\n      type: KubernetesNMStateAvailable",
		"interface lo type loopback state up",
		"Available    True   SuccessfullyConfigured   1/1 nodes successfully configured",
		"enactment worker-0.demo-dummy0",
		"removed:",
		"      reason: UserDisabled\n      status: \"False\"\n      type: KubernetesNMStateAvailable",
		"1 NodeNetworkConfigurationPolicy exists and is not enforced",
	} {
		assert.Contains(t, out, want)
	}
	kept := out[bytes.Index(stdout.Bytes(), []byte("kept:")):]
	assert.Contains(t, kept, "CustomResourceDefinition nodenetworkconfigurationpolicies.nmstate.io")
	assert.Contains(t, kept, "ValidatingAdmissionPolicy nncp-validation-policy")
	assert.Contains(t, kept, "ValidatingAdmissionPolicyBinding nncp-validation-policy-binding")
	assert.Contains(t, kept, "ClusterRole nmstate-cluster-reader")
	assert.NotContains(t, kept, "ClusterRole nmstate-handler")
	assert.NotContains(t, kept, "DaemonSet")
	assert.FileExists(t, kubeconfig)
}
