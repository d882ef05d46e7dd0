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
		"KubernetesNMStateProgressing   True   RollingOut",
		"removed:",
		"KubernetesNMStateAvailable     False  UserDisabled",
		"1 NodeNetworkConfigurationPolicy was kept",
	} {
		assert.Contains(t, out, want)
	}
	kept := out[bytes.Index(stdout.Bytes(), []byte("kept:")):]
	assert.Contains(t, kept, "CustomResourceDefinition nodenetworkconfigurationpolicies.nmstate.io")
	assert.NotContains(t, kept, "DaemonSet")
	assert.FileExists(t, kubeconfig)
}
