// Package devcluster starts a real control plane for the demo, the
// end-to-end tests and the benchmarks: kube-apiserver and etcd (controller-
// runtime envtest, with the binaries `make tools` builds) with the OpenShift
// CRDs and objects the plugin and the operands read, and, when the cluster
// has nodes, kube-controller-manager, kube-scheduler and kwok simulating the
// nodes' kubelets.
package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

// Options say where things are; paths are relative to the working directory.
type Options struct {
	// AssetsDir holds kube-apiserver, etcd, kubectl and, for a cluster with
	// nodes, kube-controller-manager, kube-scheduler and kwok. Default:
	// $KUBEBUILDER_ASSETS.
	AssetsDir string
	// NetworkCRD is the networks.operator.openshift.io CRD to install.
	NetworkCRD string
	// ExtraCRDs are installed as well (files or directories).
	ExtraCRDs []string
	// Nodes, when any, are created and the workload controllers and kwok
	// started; without nodes the cluster is an API server only.
	Nodes []Node
	// AuditLog records every request in Cluster.AuditLog (JSON lines).
	AuditLog bool
}

// Cluster is a running control plane.
type Cluster struct {
	Config     *rest.Config
	Kubeconfig []byte // a system:masters user, for kubectl
	// Dir holds the components' logs, the kubeconfig and the audit log.
	Dir string
	// AuditLog is the audit log's path when Options.AuditLog was set.
	AuditLog string
	env      *envtest.Environment
	procs    []*podproc.Process
	// controlPlane are the process groups of every etcd and kube-apiserver
	// this cluster started, restarts included: envtest tells no pid.
	controlPlane []podproc.Tracked
	stopOnce     sync.Once
	stopErr      error
}

// openshiftCRDs are the CRDs openshift/api ships that the host and the
// operands read: upstream's binaries detect OpenShift by the
// SecurityContextConstraints API and read the APIServer's TLS profile.
var openshiftCRDs = []string{
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_featuregates.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_apiservers-Default.crd.yaml",
	"security/v1/zz_generated.crd-manifests/0000_03_config-operator_01_securitycontextconstraints.crd.yaml",
}

// auditPolicy records who did what to which resource and the answer, not
// bodies: enough to tell which permissions a service account used.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// Start starts the control plane, installs the CRDs and creates the nodes.
func Start(opts Options) (_ *Cluster, err error) {
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
	monitoring, err := monitoringCRDs()
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "devcluster-")
	if err != nil {
		return nil, fmt.Errorf("creating the cluster's directory: %w", err)
	}
	c := &Cluster{Dir: dir}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	// The API server's certificates and etcd's data are kept in the
	// cluster's directory rather than in directories envtest creates and
	// deletes on every stop, so that RestartAPIServer and RestartEtcd bring
	// back the same serving certificate, client CA and service-account keys
	// (every client and token keeps working) and every object.
	certDir := filepath.Join(dir, "kube-apiserver")
	if err := os.Mkdir(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating kube-apiserver's certificate directory: %w", err)
	}
	c.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		// A loaded machine makes the start slower, not a failure (envtest's
		// default is 20 s a component).
		ControlPlaneStartTimeout: 2 * time.Minute,
		CRDInstallOptions:        envtest.CRDInstallOptions{Paths: paths, CRDs: monitoring, ErrorIfPathMissing: true},
		ControlPlane:             envtest.ControlPlane{Etcd: &envtest.Etcd{DataDir: filepath.Join(dir, "etcd")}},
	}
	c.env.ControlPlane.GetAPIServer().CertDir = certDir
	apiserver := c.env.ControlPlane.GetAPIServer().Configure()
	// The address the server publishes for the kubernetes Service; in the
	// isolated network (RunIsolated) there is no other interface to pick it
	// from, and nothing dials it.
	apiserver.Set("advertise-address", nodeIP)
	// On SIGTERM, end the clients' watches (they resume against the next
	// server) rather than keep the process until its 60s shutdown timeout
	// while they stay open: RestartAPIServer then takes seconds, not a
	// minute and envtest's 20s stop timeout.
	apiserver.Set("shutdown-watch-termination-grace-period", "5s")
	if opts.AuditLog {
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return nil, fmt.Errorf("writing the audit policy: %w", err)
		}
		c.AuditLog = filepath.Join(dir, "audit.log")
		apiserver.Set("audit-policy-file", policy).Set("audit-log-path", c.AuditLog).Set("audit-log-format", "json")
	}
	if len(opts.Nodes) > 0 {
		// The API server calls webhooks at an endpoint of their Service, as
		// on a cluster without kube-proxy in the API server's network, so
		// that a call reaches a pod's (loopback) address: see podCIDR.
		apiserver.Set("enable-aggregator-routing", "true")
		// As on a real cluster, pods need their service account to exist.
		// Nodes are created untainted: no node-lifecycle controller runs to
		// lift the not-ready taint this plugin would add, and kwok makes
		// them Ready at once.
		apiserver.Set("disable-admission-plugins", "TaintNodesByCondition")
	}
	if err := c.withLogs(func() (err error) { c.Config, err = c.env.Start(); return err }); err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	user, err := c.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding a kubectl user: %w", err)
	}
	if c.Kubeconfig, err = user.KubeConfig(); err != nil {
		return nil, fmt.Errorf("writing a kubeconfig: %w", err)
	}
	if err := publishAPIAddress(c.Config.Host); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, c.Kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	cl, err := client.New(c.Config, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	ctx := context.Background()
	// The TLS profile upstream's binaries read on OpenShift; empty as the
	// installer leaves it (the Intermediate profile).
	if err := cl.Create(ctx, &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}); err != nil {
		return nil, fmt.Errorf("creating the APIServer config: %w", err)
	}
	if err := createClusterReader(ctx, cl); err != nil {
		return nil, err
	}
	if len(opts.Nodes) == 0 {
		return c, nil
	}
	if c.procs, err = startWorkloadControllers(assets, dir, kubeconfig, opts.Nodes); err != nil {
		return nil, err
	}
	if err := CreateNodes(ctx, cl, opts.Nodes); err != nil {
		return nil, err
	}
	if err := c.waitNodesReady(ctx, cl, opts.Nodes); err != nil {
		return nil, err
	}
	return c, nil
}

// waitNodesReady waits for kwok to make every node Ready.
func (c *Cluster) waitNodesReady(ctx context.Context, cl client.Client, nodes []Node) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, n := range nodes {
		for {
			node := &corev1.Node{}
			if err := cl.Get(ctx, client.ObjectKey{Name: n.Name}, node); err != nil {
				return fmt.Errorf("reading node %s: %w", n.Name, err)
			}
			if nodeReady(node) {
				break
			}
			// An early exit is fatal to the cluster's start.
			for _, p := range c.procs {
				if exited, err := p.Exited(); exited {
					return fmt.Errorf("%s exited: %v; logs in %s", p.Name, err, c.Dir)
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s did not become Ready within 60s (kwok's log is in %s)", n.Name, c.Dir)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Stop stops the controllers and the control plane and removes their data;
// only the first call does anything.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		errs := []error{stopAll(c.procs)}
		// Also when the start failed: etcd may run, and a kube-apiserver
		// that was slow to answer its health check.
		if c.env != nil {
			errs = append(errs, c.env.Stop())
		}
		errs = append(errs, c.killControlPlane())
		errs = append(errs, os.RemoveAll(c.Dir))
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = configv1.AddToScheme(s)
	return s
}

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
