package devcluster

// What the real Cluster Network Operator (openshift/cluster-network-operator
// 2a6a57fef) needs to start and reconcile against this cluster, as read from
// its source, and CNO itself run out of cluster from its tree as its own
// hack/run-locally.sh does, under a supervisor. hack/cno-e2e.sh builds the
// binaries; test/cnoe2e runs the scenarios.
//
// Read from CNO's source (file:line at 2a6a57fef):
//   - pkg/operator/operator.go:119-141: the FeatureGate accessor waits (one
//     minute, then CNO exits) for a status.featureGates[] entry whose version
//     is RELEASE_VERSION; with RELEASE_VERSION "0.0.1-snapshot" (its
//     manifest's default) it would read the ClusterVersion instead. Its
//     Enabled() panics on a gate the status does not list, so the status lists
//     every gate CNO's vendored openshift/api defines (read from the tree).
//   - pkg/controller/*: the watched CRDs (config Network, Proxy,
//     ClusterOperator, Infrastructure, FeatureGate, APIServer, IngressController,
//     MachineConfig, MachineConfigPool, and CNO's own EgressRouter and
//     OperatorPKI, installed from its tree's manifests/).
//   - pkg/controller/clusterconfig: network.config.openshift.io/cluster is
//     merged into the operator config (networkType, clusterNetwork,
//     serviceNetwork); pkg/network/render.go:584: an unknown default network
//     type is logged ("NOTICE: Unknown network type") and renders nothing.
//   - pkg/util/util.go:20-30: ConfigMap openshift-network-operator/mtu;
//     without it an MTU prober Job is rendered and waited for.
//   - pkg/platform/platform.go:38: ConfigMap
//     openshift-network-operator/network-node-identity, "enabled": "false",
//     or the network-node-identity webhook (pods/status, nodes) is rendered
//     with no backend and blocks kwok's status writes.
//   - pkg/controller/proxyconfig/controller.go:205: kube-system/cluster-config-v1.
//   - pkg/names/names.go:137: the system trust bundle
//     /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem, read by the proxy
//     config controller. /etc/pki does not exist on this machine, so no bind
//     mount has a target: CNO runs in a mount namespace of its own (unshare
//     -m) where /etc is an overlay whose upper layer is a temporary directory,
//     and the bundle is written there. Nothing is written to the machine's /etc.
//   - cmd/cluster-network-operator/main.go:99,123-159: --listen overrides the
//     serving address (127.0.0.1 here); leader election follows the
//     GenericOperatorConfig of --config (leaderElection.disable: true).
//   - pkg/controller/tls, pkg/operator/operator.go:178: CNO cancels itself on
//     a TLS-profile change (and library-go on a FeatureGate change): it exits
//     and the supervisor starts it again.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

// CNONamespace is where CNO runs and keeps its ConfigMaps.
const CNONamespace = "openshift-network-operator"

// CNOCRDs are the CRDs CNO watches besides those Start always installs:
// openshift/api's from the pinned module, CNO's own from its tree.
func CNOCRDs(tree string) ([]string, error) {
	api, err := moduleDir("github.com/openshift/api")
	if err != nil {
		return nil, err
	}
	paths := []string{
		filepath.Join(api, "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_networks-Default.crd.yaml"),
		filepath.Join(api, "config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml"),
		filepath.Join(api, "operator/v1/zz_generated.crd-manifests/0000_50_ingress_00_ingresscontrollers-Default.crd.yaml"),
		filepath.Join(api, "machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml"),
		filepath.Join(api, "machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools-SelfManagedHA.crd.yaml"),
		filepath.Join(tree, "manifests/0000_70_cluster-network-operator_01_egr_crd.yaml"),
		filepath.Join(tree, "manifests/0000_70_cluster-network-operator_01_pki_crd.yaml"),
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("a CRD CNO watches: %w", err)
		}
	}
	return paths, nil
}

// CNOCluster is the cluster CNO is started on.
type CNOCluster struct {
	Platform configv1.PlatformType
	// Topology of the control plane and the infrastructure (default
	// HighlyAvailable).
	Topology configv1.TopologyMode
	// ReleaseVersion is CNO's RELEASE_VERSION and the FeatureGate status
	// entry's version.
	ReleaseVersion string
	// Tree is the CNO source tree the binary was built from: its vendored
	// openshift/api names the gates CNO may ask about.
	Tree string
	// EnabledGates are enabled on top of the Default feature set.
	EnabledGates []string
	// NMState is spec.kubernetesNMState of the operator config, nil: absent.
	NMState map[string]any
	// NoOperatorConfig leaves network.operator.openshift.io/cluster to CNO's
	// clusterconfig controller, as at install time.
	NoOperatorConfig bool
}

var gateName = regexp.MustCompile(`newFeatureGate\("([A-Za-z0-9]+)"\)`)

// cnoGates lists every gate CNO's vendored openshift/api defines, enabled as
// the Default feature set of the pinned openshift/api enables it, plus extra.
func cnoGates(tree string, extra []string) (enabled, disabled []configv1.FeatureGateAttributes, err error) {
	src, err := os.ReadFile(filepath.Join(tree, "vendor/github.com/openshift/api/features/features.go"))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the feature gates CNO knows: %w", err)
	}
	known := map[string]bool{}
	for _, m := range gateName.FindAllSubmatch(src, -1) {
		known[string(m[1])] = false
	}
	if len(known) == 0 {
		return nil, nil, errors.New("no feature gate found in CNO's vendored openshift/api")
	}
	for _, g := range features.FeatureSets(4, features.SelfManaged, configv1.Default).Enabled {
		if _, ok := known[string(g.FeatureGateAttributes.Name)]; ok {
			known[string(g.FeatureGateAttributes.Name)] = true
		}
	}
	for _, g := range extra {
		known[g] = true
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		attr := configv1.FeatureGateAttributes{Name: configv1.FeatureGateName(n)}
		if known[n] {
			enabled = append(enabled, attr)
		} else {
			disabled = append(disabled, attr)
		}
	}
	return enabled, disabled, nil
}

// SetFeatureGates creates or updates the FeatureGate "cluster": the Default
// feature set with s.EnabledGates on top (CustomNoUpgrade), and its status
// for s.ReleaseVersion, as the cluster-config-operator writes it. CNO reads
// its gates as it starts.
func SetFeatureGates(ctx context.Context, c client.Client, s CNOCluster) error {
	enabled, disabled, err := cnoGates(s.Tree, s.EnabledGates)
	if err != nil {
		return err
	}
	fg := &configv1.FeatureGate{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	err = c.Get(ctx, client.ObjectKeyFromObject(fg), fg)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the FeatureGate: %w", err)
	}
	fg.Spec = configv1.FeatureGateSpec{}
	if len(s.EnabledGates) > 0 {
		fg.Spec.FeatureSet = configv1.CustomNoUpgrade
		fg.Spec.CustomNoUpgrade = &configv1.CustomFeatureGates{}
		for _, g := range s.EnabledGates {
			fg.Spec.CustomNoUpgrade.Enabled = append(fg.Spec.CustomNoUpgrade.Enabled, configv1.FeatureGateName(g))
		}
	}
	if exists {
		err = c.Update(ctx, fg)
	} else {
		err = c.Create(ctx, fg)
	}
	if err != nil {
		return fmt.Errorf("writing the FeatureGate: %w", err)
	}
	fg.Status.FeatureGates = []configv1.FeatureGateDetails{{Version: s.ReleaseVersion, Enabled: enabled, Disabled: disabled}}
	if err := c.Status().Update(ctx, fg); err != nil {
		return fmt.Errorf("setting the FeatureGate status: %w", err)
	}
	return nil
}

// CreateCNOPrerequisites creates what CNO reads before and while it starts.
func CreateCNOPrerequisites(ctx context.Context, c client.Client, s CNOCluster) error {
	topology := s.Topology
	if topology == "" {
		topology = configv1.HighlyAvailableTopologyMode
	}
	if err := CreateInfrastructure(ctx, c, s.Platform, topology, topology); err != nil {
		return err
	}
	if err := SetFeatureGates(ctx, c, s); err != nil {
		return err
	}
	objs := []client.Object{
		&configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}},
		// Empty, as the CVO creates it from CNO's manifest before CNO starts.
		&configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "network"}},
		&configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: configv1.NetworkSpec{
			// A network plugin CNO does not manage: it renders nothing for it.
			NetworkType:    "Calico",
			ClusterNetwork: []configv1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
			ServiceNetwork: []string{"172.30.0.0/16"},
		}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CNONamespace}},
		// Where CNO writes the trust bundle and its public role (the
		// cluster-config-operator creates them).
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-config"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-config-managed"}},
		// CNO's own DaemonSets run at this priority; without it their pods
		// are refused, CNO never completes its install, and until then it
		// prunes no RBAC (pkg/controller/statusmanager/status_manager.go:251).
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "openshift-user-critical"}, Value: 1000000000},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: CNONamespace, Name: "mtu"}, Data: map[string]string{"mtu": "1500"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: CNONamespace, Name: "network-node-identity"}, Data: map[string]string{"enabled": "false"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cluster-config-v1"}, Data: map[string]string{
			"install-config": "apiVersion: v1\nmetadata:\n  name: sample\nbaseDomain: example.com\nnetworking:\n  networkType: Calico\n" +
				"  clusterNetwork:\n  - cidr: 10.128.0.0/14\n    hostPrefix: 23\n  serviceNetwork:\n  - 172.30.0.0/16\n",
		}},
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if s.NoOperatorConfig {
		return nil
	}
	return CreateOperatorNetwork(ctx, c, s.NMState)
}

// CreateOperatorNetwork creates network.operator.openshift.io/cluster as the
// installer would for a plugin CNO does not manage: no multus, no network
// diagnostics, no kube-proxy (fixed at creation: CNO refuses to change
// disableMultiNetwork later), and spec.kubernetesNMState (nil: absent).
func CreateOperatorNetwork(ctx context.Context, c client.Client, nmstateSpec map[string]any) error {
	spec := map[string]any{
		"managementState":           "Managed",
		"disableMultiNetwork":       true,
		"disableNetworkDiagnostics": true,
		"deployKubeProxy":           false,
		"defaultNetwork":            map[string]any{"type": "Calico"},
		"clusterNetwork":            []any{map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23)}},
		"serviceNetwork":            []any{"172.30.0.0/16"},
	}
	return createNetwork(ctx, c, spec, nmstateSpec)
}

// CNOOptions say how CNO runs.
type CNOOptions struct {
	// Binary is cmd/cluster-network-operator; Tree its source tree, the
	// working directory (CNO reads ./bindata).
	Binary, Tree string
	// Kubeconfig is the file CNO is given (e.g. one for a FaultProxy).
	Kubeconfig string
	// ReleaseVersion is RELEASE_VERSION.
	ReleaseVersion string
	// Env is set on top of the env of CNO's Deployment manifest.
	Env map[string]string
	// Dir holds CNO's log (cno.log, every run appended) and its files.
	Dir string
	// TrustBundle is the system trust bundle CNO reads (PEM); it refuses an
	// empty one, and is Degraded for it.
	TrustBundle []byte
}

// CNO is a supervised cluster-network-operator: started again a second
// after it exits, until Stop.
type CNO struct {
	LogPath string
	opts    CNOOptions
	dir     string
	args    []string
	env     []string

	mu       sync.Mutex
	binary   string
	proc     *os.Process
	starts   int
	exits    []string
	stopping bool
	exited   chan struct{}
	done     chan struct{}
}

// StartCNO starts CNO under a supervisor.
func StartCNO(opts CNOOptions) (*CNO, error) {
	dir := filepath.Join(opts.Dir, "cno")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating CNO's directory: %w", err)
	}
	env, err := cnoEnv(opts)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: operator.openshift.io/v1alpha1\nkind: GenericOperatorConfig\nleaderElection:\n  disable: true\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing CNO's config: %w", err)
	}
	bundle := filepath.Join(dir, "tls-ca-bundle.pem")
	if err := os.WriteFile(bundle, opts.TrustBundle, 0o600); err != nil {
		return nil, fmt.Errorf("writing the trust bundle: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"etc-upper", "etc-work", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("creating CNO's %s: %w", d, err)
		}
	}
	// In a mount namespace of its own: /etc an overlay whose writes go to
	// etc-upper, the trust bundle laid there, then CNO as run-locally.sh
	// runs it (from its tree, with its manifest's env).
	script := `set -e
mount -t overlay overlay -o lowerdir=/etc,upperdir="$CNO_ETC_UPPER",workdir="$CNO_ETC_WORK" /etc
mkdir -p /etc/pki/ca-trust/extracted/pem
cp "$CNO_TRUST_BUNDLE" /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem
cd "$CNO_TREE"
exec "$CNO_BINARY" "$@"`
	n := &CNO{
		LogPath: filepath.Join(opts.Dir, "cno.log"),
		opts:    opts,
		dir:     dir,
		binary:  opts.Binary,
		args: []string{"-m", "--propagation", "private", "--", "bash", "-c", script, "cno",
			"start", "--kubeconfig=" + opts.Kubeconfig, "--config=" + config, "--namespace=" + CNONamespace,
			fmt.Sprintf("--listen=127.0.0.1:%d", port)},
		env: append(env, "CNO_ETC_UPPER="+filepath.Join(dir, "etc-upper"), "CNO_ETC_WORK="+filepath.Join(dir, "etc-work"),
			"CNO_TRUST_BUNDLE="+bundle, "CNO_TREE="+opts.Tree, "TMPDIR="+filepath.Join(dir, "tmp")),
		exited: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	if err := n.start(); err != nil {
		return nil, err
	}
	go n.supervise()
	return n, nil
}

// cnoEnv is the env of CNO's Deployment manifest (the values, as
// run-locally.sh extracts them), with RELEASE_VERSION, POD_NAME and
// opts.Env set.
func cnoEnv(opts CNOOptions) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(opts.Tree, "manifests/0000_70_cluster-network-operator_03_deployment.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading CNO's Deployment manifest: %w", err)
	}
	dep := &appsv1.Deployment{}
	if err := yaml.Unmarshal(data, dep); err != nil {
		return nil, fmt.Errorf("decoding CNO's Deployment manifest: %w", err)
	}
	if len(dep.Spec.Template.Spec.Containers) == 0 {
		return nil, errors.New("CNO's Deployment manifest has no container")
	}
	vars := map[string]string{}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			vars[e.Name] = e.Value
		}
	}
	vars["RELEASE_VERSION"] = opts.ReleaseVersion
	vars["POD_NAME"] = "LOCAL"
	for k, v := range opts.Env {
		vars[k] = v
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (n *CNO) logLine(format string, args ...any) {
	f, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "supervisor %s: %s\n", time.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
}

var errStopping = errors.New("stopping")

func (n *CNO) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopping {
		return errStopping
	}
	log, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening CNO's log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command("unshare", n.args...)
	cmd.Env = append(append([]string{}, n.env...), "CNO_BINARY="+n.binary)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	n.starts++
	fmt.Fprintf(log, "supervisor %s: starting %s (start %d)\n", time.Now().Format(time.RFC3339Nano), n.binary, n.starts)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting CNO: %w", err)
	}
	n.proc = cmd.Process
	_, _ = podproc.Track("cluster-network-operator (start "+strconv.Itoa(n.starts)+")", cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		n.mu.Lock()
		n.exits = append(n.exits, fmt.Sprint(err))
		n.proc = nil
		n.mu.Unlock()
		n.logLine("CNO exited: %v", err)
		n.exited <- struct{}{}
	}()
	return nil
}

func (n *CNO) supervise() {
	defer close(n.done)
	for range n.exited {
		n.mu.Lock()
		stopping := n.stopping
		n.mu.Unlock()
		if stopping {
			return
		}
		time.Sleep(time.Second)
		for {
			if err := n.start(); errors.Is(err, errStopping) {
				return
			} else if err != nil {
				n.logLine("%v; retrying", err)
				time.Sleep(time.Second)
				continue
			}
			break
		}
	}
}

// Restart stops the running CNO (SIGTERM, as a pod deletion does) and has the
// supervisor start binary ("": the same) in its place; it returns once the
// new process has started.
func (n *CNO) Restart(binary string) error {
	n.mu.Lock()
	if binary != "" {
		n.binary = binary
	}
	starts, proc := n.starts, n.proc
	n.mu.Unlock()
	if proc != nil {
		n.logLine("restarting: SIGTERM")
		_ = syscall.Kill(-proc.Pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		n.mu.Lock()
		started := n.starts > starts && n.proc != nil
		n.mu.Unlock()
		if started {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CNO was not started again within 3 minutes (%d starts, %d before the restart)", n.Starts(), starts)
}

// Starts is how many times CNO was started.
func (n *CNO) Starts() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.starts
}

// Exits lists how each run ended.
func (n *CNO) Exits() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string{}, n.exits...)
}

// Log is what every run of CNO printed so far.
func (n *CNO) Log() string {
	b, err := os.ReadFile(n.LogPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", n.LogPath, err)
	}
	return string(b)
}

// Stop stops CNO (SIGTERM, then SIGKILL after 20s) and its supervisor.
func (n *CNO) Stop() error {
	n.mu.Lock()
	n.stopping = true
	proc := n.proc
	n.mu.Unlock()
	if proc != nil {
		_ = syscall.Kill(-proc.Pid, syscall.SIGTERM)
	}
	select {
	case <-n.done:
		return nil
	case <-time.After(20 * time.Second):
	}
	n.mu.Lock()
	proc = n.proc
	n.mu.Unlock()
	if proc != nil {
		_ = syscall.Kill(-proc.Pid, syscall.SIGKILL)
	}
	<-n.done
	return errors.New("CNO did not stop within 20s of SIGTERM")
}

// AddUser adds a user of the API server (client-certificate authentication)
// and returns a kubeconfig for it: a process run with it is told apart from
// the others in the audit log.
func (c *Cluster) AddUser(name string, groups ...string) ([]byte, error) {
	user, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return user.KubeConfig()
}
