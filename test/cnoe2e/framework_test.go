//go:build cnoe2e

package cnoe2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	// releaseVersion is CNO's RELEASE_VERSION, and the FeatureGate status
	// entry's version.
	releaseVersion = "4.22.0-cnoe2e"
	// networkCRD has spec.kubernetesNMState (the TechPreviewNoUpgrade CRD of
	// this project's manifests/).
	networkCRD = "../../manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml"
	tick       = 100 * time.Millisecond
)

// gates are enabled on top of the Default feature set: the field's and the
// default's.
var gates = []string{"KubernetesNMState", "KubernetesNMStateByDefault"}

// binaries are what hack/cno-e2e.sh built.
type binaries struct{ patched, pristine, tree string }

func cnoBinaries(t *testing.T) binaries {
	t.Helper()
	b := binaries{os.Getenv("CNO_E2E_PATCHED"), os.Getenv("CNO_E2E_PRISTINE"), os.Getenv("CNO_E2E_TREE")}
	require.True(t, b.patched != "" && b.pristine != "" && b.tree != "",
		"CNO_E2E_PATCHED, CNO_E2E_PRISTINE and CNO_E2E_TREE name the CNO binaries and tree: run hack/cno-e2e.sh CNO_DIR")
	return b
}

type env struct {
	t     *testing.T
	bins  binaries
	dc    *devcluster.Cluster
	cfg   *rest.Config
	c     client.WithWatch
	proxy *devcluster.FaultProxy
	cno   *devcluster.CNO
	ops   *devcluster.Operands
	procs []*podproc.Process
}

type options struct {
	platform configv1.PlatformType
	nmstate  map[string]any // spec.kubernetesNMState; nil: absent
	// networkCRD replaces the shipped Network.operator CRD.
	networkCRD string
	binary     string // default: the patched CNO
	// defaultFeatureSet leaves the gates off: the Default feature set.
	defaultFeatureSet bool
	auditLog          bool
	extraCRDs         []string
}

func assetsDir(t *testing.T) string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, err := filepath.Abs("../../bin")
	require.NoError(t, err)
	return dir
}

// start brings up the sample bare-metal cluster (kwok nodes, the workload
// controllers and scheduler), what CNO needs, and CNO itself.
func start(t *testing.T, o options) *env {
	t.Helper()
	bins := cnoBinaries(t)
	crds, err := devcluster.CNOCRDs(bins.tree)
	require.NoError(t, err)
	if o.networkCRD == "" {
		o.networkCRD = networkCRD
	}
	dc, err := devcluster.Start(devcluster.Options{AssetsDir: assetsDir(t), NetworkCRD: o.networkCRD,
		ExtraCRDs: append(crds, o.extraCRDs...), Nodes: devcluster.BareMetalNodes(), AuditLog: o.auditLog})
	require.NoError(t, err)
	e := &env{t: t, bins: bins, dc: dc, cfg: dc.Config}
	t.Cleanup(func() { assert.NoError(t, dc.Stop(), "stopping the cluster") })
	scheme, err := controller.NewScheme()
	require.NoError(t, err)
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	e.c, err = client.NewWithWatch(dc.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	enabled := gates
	if o.defaultFeatureSet {
		enabled = nil
	}
	require.NoError(t, devcluster.CreateCNOPrerequisites(e.ctx(), e.c, devcluster.CNOCluster{
		Platform: o.platform, ReleaseVersion: releaseVersion, Tree: bins.tree, EnabledGates: enabled, NMState: o.nmstate,
	}))
	e.proxy, err = devcluster.StartFaultProxy(dc.Config)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.proxy.Close() })
	e.ops, err = devcluster.StartOperands(dc.Config, e.c, assetsDir(t), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.ops.Close()) })
	bin := o.binary
	if bin == "" {
		bin = bins.patched
	}
	e.startCNO(bin)
	return e
}

func (e *env) ctx() context.Context { return context.Background() }

// startCNO starts CNO (supervised) through the fault proxy; its log is kept
// in CNO_E2E_LOGDIR when set, and its tail logged when the test fails.
func (e *env) startCNO(bin string) {
	e.t.Helper()
	kubeconfig := filepath.Join(e.dc.Dir, "cno.kubeconfig")
	require.NoError(e.t, e.proxy.WriteKubeconfig(kubeconfig))
	var err error
	e.cno, err = devcluster.StartCNO(devcluster.CNOOptions{Binary: bin, Tree: e.bins.tree, Kubeconfig: kubeconfig,
		ReleaseVersion: releaseVersion, Dir: e.dc.Dir, TrustBundle: e.cfg.CAData})
	require.NoError(e.t, err)
	cno := e.cno
	e.t.Cleanup(func() {
		assert.NoError(e.t, cno.Stop(), "stopping CNO")
		if dir := os.Getenv("CNO_E2E_LOGDIR"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(e.t.Name(), "/", "_")+"-cno.log"), []byte(cno.Log()), 0o600)
		}
		if e.t.Failed() {
			e.t.Logf("--- CNO's log (last 80 lines; starts %d, exits %v):\n%s", cno.Starts(), cno.Exits(), tail(cno.Log(), 80))
		}
	})
}

// operatorConditions are network.operator.openshift.io/cluster's.
func (e *env) operatorConditions() map[string]operv1.OperatorCondition {
	e.t.Helper()
	conds, err := devcluster.Conditions(e.ctx(), e.c)
	if apierrors.IsNotFound(err) {
		return map[string]operv1.OperatorCondition{}
	}
	require.NoError(e.t, err)
	return conds
}

// clusterOperatorConditions are clusteroperator/network's.
func (e *env) clusterOperatorConditions() map[string]configv1.ClusterOperatorStatusCondition {
	e.t.Helper()
	co := &configv1.ClusterOperator{}
	require.NoError(e.t, e.c.Get(e.ctx(), client.ObjectKey{Name: "network"}, co))
	out := map[string]configv1.ClusterOperatorStatusCondition{}
	for _, c := range co.Status.Conditions {
		out[string(c.Type)] = c
	}
	return out
}

// waitFor polls cond every tick, at once first, until it holds or d has
// passed, and reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	return wait.PollUntilContextTimeout(context.Background(), tick, d, true, func(context.Context) (bool, error) {
		return cond(), nil
	}) == nil
}

// waitCondition waits for a KubernetesNMState* condition on the operator
// config to have status (and reason, unless empty).
func (e *env) waitCondition(d time.Duration, typ string, status operv1.ConditionStatus, reason string) operv1.OperatorCondition {
	e.t.Helper()
	var last operv1.OperatorCondition
	ok := waitFor(d, func() bool {
		last = e.operatorConditions()[typ]
		return last.Status == status && (reason == "" || last.Reason == reason)
	})
	require.True(e.t, ok, "condition %s never became %s/%s within %s; last: %+v; all: %s", typ, status, reason, d, last, e.describeConditions())
	return last
}

func (e *env) describeConditions() string {
	var out []string
	for typ, c := range e.operatorConditions() {
		out = append(out, fmt.Sprintf("%s=%s/%s %q", typ, c.Status, c.Reason, c.Message))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func (e *env) exists(obj client.Object, namespace, name string) bool {
	e.t.Helper()
	err := e.c.Get(e.ctx(), client.ObjectKey{Namespace: namespace, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(e.t, err)
	return true
}

// waitRolledOut waits for the real controllers to roll the handler (six
// Linux nodes) and the webhook out.
func (e *env) waitRolledOut(d time.Duration) (*appsv1.DaemonSet, *appsv1.Deployment) {
	e.t.Helper()
	ds, dep := &appsv1.DaemonSet{}, &appsv1.Deployment{}
	ok := waitFor(d, func() bool {
		return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && dsAvailable(ds) &&
			e.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment) && depAvailable(dep)
	})
	require.True(e.t, ok, "the handler and webhook were not rolled out within %s; DaemonSet status %+v, Deployment status %+v", d, ds.Status, dep.Status)
	return ds, dep
}

func dsAvailable(ds *appsv1.DaemonSet) bool {
	s := ds.Status
	return s.ObservedGeneration == ds.Generation && s.DesiredNumberScheduled > 0 &&
		s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled
}

func depAvailable(dep *appsv1.Deployment) bool {
	s := dep.Status
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	return s.ObservedGeneration == dep.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want
}

// runOperand starts the container of a pod of workload bound to node ("":
// any) as a process, upstream's real binary, until the test ends.
func (e *env) runOperand(workload, container, node string) *podproc.Process {
	e.t.Helper()
	var p *podproc.Process
	var err error
	ok := waitFor(3*time.Minute, func() bool {
		pod, perr := devcluster.BoundPod(e.ctx(), e.c, workload, node)
		if perr != nil || pod == nil {
			err = perr
			return false
		}
		p, err = e.ops.Runner.Start(e.ctx(), pod, container)
		return err == nil
	})
	require.True(e.t, ok, "starting %s on %q: %v", workload, node, err)
	e.t.Cleanup(func() {
		assert.NoError(e.t, p.Stop())
		if e.t.Failed() {
			e.t.Logf("--- output of %s (%s):\n%s", workload, p.Name, tail(p.Log(), 40))
		}
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// patchNetwork merge-patches the operator config.
func (e *env) patchNetwork(patch string) {
	e.t.Helper()
	require.NoError(e.t, devcluster.PatchNetwork(e.ctx(), e.c, patch))
}

// network is the operator config as the server holds it.
func (e *env) network() *unstructured.Unstructured {
	e.t.Helper()
	obj, err := devcluster.ReadNetwork(e.ctx(), e.c)
	require.NoError(e.t, err)
	return obj
}

// figure logs a measured number in a form hack/cno-e2e.sh prints.
func figure(t *testing.T, format string, args ...any) {
	t.Logf("cnoe2e: figure: %s: %s", t.Name(), fmt.Sprintf(format, args...))
}
