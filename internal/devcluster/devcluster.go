// Package devcluster starts a real kube-apiserver and etcd (controller-runtime
// envtest, with the binaries `make tools` builds) with the OpenShift CRDs the
// plugin reads, for the demo and the end-to-end tests.
package devcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options say where things are; paths are relative to the working directory.
type Options struct {
	// AssetsDir holds kube-apiserver, etcd and kubectl. Default:
	// $KUBEBUILDER_ASSETS.
	AssetsDir string
	// NetworkCRD is the networks.operator.openshift.io CRD to install.
	NetworkCRD string
	// ExtraCRDs are installed as well (files or directories).
	ExtraCRDs []string
}

// Cluster is a running control plane.
type Cluster struct {
	Config     *rest.Config
	Kubeconfig []byte // a system:masters user, for kubectl
	env        *envtest.Environment
}

// openshiftCRDs are the CRDs openshift/api ships that the host reads.
var openshiftCRDs = []string{
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_featuregates.crd.yaml",
}

// Start starts kube-apiserver and etcd and installs the CRDs.
func Start(opts Options) (*Cluster, error) {
	assets := opts.AssetsDir
	if assets == "" {
		assets = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("no kube-apiserver in %q (build it with `make tools`, or set KUBEBUILDER_ASSETS): %w", assets, err)
	}
	api, err := moduleDir("github.com/openshift/api")
	if err != nil {
		return nil, err
	}
	paths := []string{opts.NetworkCRD}
	for _, p := range openshiftCRDs {
		paths = append(paths, filepath.Join(api, p))
	}
	paths = append(paths, opts.ExtraCRDs...)

	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("adding a kubectl user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("writing a kubeconfig: %w", err)
	}
	return &Cluster{Config: cfg, Kubeconfig: kubeconfig, env: env}, nil
}

// Stop stops the control plane and removes its data.
func (c *Cluster) Stop() error { return c.env.Stop() }

// moduleDir finds a pinned module on disk: the CRDs are read from the very
// module version go.mod pins, never from a copy.
func moduleDir(module string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("locating %s with `go list -m` (run from the source tree): %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded; run `go mod download`", module)
	}
	return dir, nil
}
