// Package e2e runs the plugin host against a real kube-apiserver and etcd
// (envtest, with the binaries `make tools` builds) with the CRDs that
// openshift/api ships installed.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	manifestDir  = "../../bindata"
	handlerImage = "quay.io/openshift/origin-kubernetes-nmstate-handler:e2e"
	tick         = 100 * time.Millisecond
)

// wait bounds every wait for the cluster to reach a state. Each wait ends as
// soon as its condition holds, so the bound costs only a failing test: it is
// generous, so that a loaded machine (a demo beside the tests, a quarter of
// the requests failing in runAPIFaults) makes a test slower, not red.
const wait = 3 * time.Minute

const (
	techPreviewNetworkCRD = "../../manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml"
	defaultNetworkCRD     = "../../manifests/0000_70_network_01_networks-Default.crd.yaml"
)

type cluster struct {
	t          *testing.T
	cfg        *rest.Config
	c          client.Client // direct, uncached: what a user or kubectl sees
	kubeconfig string
	dc         *devcluster.Cluster
	// hostLogger, when set, is the logger of the hosts started next
	// (controller-runtime's global one otherwise).
	hostLogger *logr.Logger
}

type clusterOption struct {
	networkCRD string // default: this project's manifests/ CRD
	extraCRDs  []string
	// nodes, when any, start the workload controllers and kwok too.
	nodes    []devcluster.Node
	auditLog bool
}

// startCluster starts kube-apiserver and etcd with the real CRDs installed.
func startCluster(t *testing.T, opt clusterOption) *cluster {
	t.Helper()
	networkCRD := opt.networkCRD
	if networkCRD == "" {
		// spec.kubernetesNMState is behind the KubernetesNMState feature
		// gate, on in TechPreviewNoUpgrade: a Default cluster's CRD lacks it
		// (TestDefaultFeatureSetHasNoField).
		networkCRD = techPreviewNetworkCRD
	}
	dc, err := devcluster.Start(devcluster.Options{AssetsDir: assetsDir(t), NetworkCRD: networkCRD, ExtraCRDs: opt.extraCRDs,
		Nodes: opt.nodes, AuditLog: opt.auditLog})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, dc.Stop(), "stopping the cluster") })

	scheme, err := controller.NewScheme()
	require.NoError(t, err)
	c, err := client.New(dc.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, dc.Kubeconfig, 0o600))
	return &cluster{t: t, cfg: dc.Config, c: c, kubeconfig: path, dc: dc}
}

func assetsDir(t *testing.T) string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, err := filepath.Abs("../../bin")
	require.NoError(t, err)
	return dir
}

type hostOption func(*controller.Options)

// startHostWithClock runs the host rechecking every second, with a clock
// the test moves ahead by storing into the offset it returns: a grace that
// ends sends no event.
func (k *cluster) startHostWithClock() *atomic.Int64 {
	k.t.Helper()
	var offset atomic.Int64
	k.startHost(func(o *controller.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		o.RecheckInterval = time.Second
	})
	return &offset
}

// startHost runs the plugin host against the cluster until the test ends.
func (k *cluster) startHost(opts ...hostOption) *controller.Reconciler {
	k.t.Helper()
	return k.startHostWith(k.cfg, opts...)
}

// startHostWith runs the host with its own rest.Config, e.g. one whose
// transport counts or fails requests.
func (k *cluster) startHostWith(cfg *rest.Config, opts ...hostOption) *controller.Reconciler {
	k.t.Helper()
	r, _ := k.launchHost(cfg, opts...)
	return r
}

// launchHost starts a host and returns it with a stop function, which
// cancels it and waits for its manager to return; stop is idempotent and
// also runs when the test ends.
func (k *cluster) launchHost(cfg *rest.Config, opts ...hostOption) (*controller.Reconciler, func() error) {
	k.t.Helper()
	mgrOpts := ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Every test starts its own host in this one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if k.hostLogger != nil {
		mgrOpts.Logger = *k.hostLogger
	}
	mgr, err := controller.NewManager(cfg, mgrOpts)
	require.NoError(k.t, err, "creating the host's manager")
	o := controller.Options{
		ManifestDir:   manifestDir,
		DefaultOnGate: true,
		// An hour: within a test, only the watches make the host act, so a
		// test of a reaction proves a watch. Tests of the recheck itself
		// set a short one.
		RecheckInterval: time.Hour,
		Images:          nmstate.Images{Handler: handlerImage, ReleaseVersion: "4.99.0-e2e"},
	}
	for _, opt := range opts {
		opt(&o)
	}
	r, err := controller.Setup(mgr, o)
	require.NoError(k.t, err, "setting up the host")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(wait):
				stopErr = fmt.Errorf("the host did not stop within %s", wait)
			}
		})
		return stopErr
	}
	k.t.Cleanup(func() { assert.NoError(k.t, stop(), "stopping the host") })
	return r, stop
}

func (k *cluster) ctx() context.Context { return context.Background() }

// createInfrastructure creates infrastructures.config.openshift.io/cluster
// with the given status, as the installer does.
func (k *cluster) createInfrastructure(platform configv1.PlatformType, controlPlane, infra configv1.TopologyMode) {
	k.t.Helper()
	require.NoError(k.t, devcluster.CreateInfrastructure(k.ctx(), k.c, platform, controlPlane, infra))
}

// createNetwork creates network.operator.openshift.io/cluster with the given
// spec.kubernetesNMState (nil: absent).
func (k *cluster) createNetwork(nmstateSpec map[string]any) {
	k.t.Helper()
	require.NoError(k.t, devcluster.CreateNetwork(k.ctx(), k.c, nmstateSpec))
}

func (k *cluster) network() *unstructured.Unstructured {
	k.t.Helper()
	obj, err := devcluster.ReadNetwork(k.ctx(), k.c)
	require.NoError(k.t, err)
	return obj
}

func (k *cluster) conditions() map[string]operv1.OperatorCondition {
	raw, _, _ := unstructured.NestedSlice(k.network().Object, "status", "conditions")
	out := map[string]operv1.OperatorCondition{}
	for _, item := range raw {
		var c operv1.OperatorCondition
		require.NoError(k.t, runtime.DefaultUnstructuredConverter.FromUnstructured(item.(map[string]any), &c))
		out[c.Type] = c
	}
	return out
}

// waitCondition waits until condition typ has the status and reason.
func (k *cluster) waitCondition(typ string, status operv1.ConditionStatus, reason string) operv1.OperatorCondition {
	k.t.Helper()
	var last operv1.OperatorCondition
	ok := waitUntil(func() bool {
		last = k.conditions()[typ]
		return last.Status == status && last.Reason == reason
	})
	require.True(k.t, ok, "condition %s never became %s/%s; last: %+v", typ, status, reason, last)
	return last
}

func (k *cluster) exists(obj client.Object, namespace, name string) bool {
	k.t.Helper()
	err := k.c.Get(k.ctx(), client.ObjectKey{Namespace: namespace, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(k.t, err)
	return true
}

// crdKept reports whether the CRD is there and not being deleted: a deleted
// CRD lingers while the server removes its instances.
func (k *cluster) crdKept(name string) bool {
	k.t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return k.exists(crd, "", name) && crd.DeletionTimestamp == nil
}

func (k *cluster) waitExists(obj client.Object, namespace, name string) {
	k.t.Helper()
	require.True(k.t, waitUntil(func() bool { return k.exists(obj, namespace, name) }), "%T %s/%s never appeared", obj, namespace, name)
}

func (k *cluster) waitGone(obj client.Object, namespace, name string) {
	k.t.Helper()
	require.True(k.t, waitUntil(func() bool { return !k.exists(obj, namespace, name) }), "%T %s/%s was never removed", obj, namespace, name)
}

func (k *cluster) patchNetwork(patch string) {
	k.t.Helper()
	require.NoError(k.t, devcluster.PatchNetwork(k.ctx(), k.c, patch))
}

// kubectl runs the real kubectl binary against the cluster.
func (k *cluster) kubectl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(assetsDir(k.t), "kubectl"), append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func waitUntil(cond func() bool) bool {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(tick)
	}
	return cond()
}

// rendered is what the plugin renders for a Network made of network, a
// JSON object such as a patch the tests apply ("" for none: the mode
// omitted), on infra with the default-on gate, to compare with what the API
// server holds.
func rendered(t *testing.T, network string, infra nmstate.Infrastructure) []*unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if network != "" {
		require.NoError(t, json.Unmarshal([]byte(network), &obj.Object))
	}
	res := nmstate.Render(nmstate.Input{Network: obj, Infrastructure: infra, DefaultOnGate: true,
		Images: nmstate.Images{Handler: handlerImage, ReleaseVersion: "4.99.0-e2e"}, ManifestDir: manifestDir})
	require.NoError(t, res.Err)
	require.NotEmpty(t, res.Objects)
	return res.Objects
}

// modeEnabled is the Network, or the patch to it, that enables
// kubernetes-nmstate.
const modeEnabled = `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`
