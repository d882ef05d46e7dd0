// Command bench measures the plugin host's resource budget against a real
// kube-apiserver and etcd, each figure beside its baseline from the same run,
// and ends with a summary that scripts can read. With -write-doc it also
// writes its figures into docs/resource-budget.md's generated section, as
// `make bench` does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/internal/quantile"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	image          = "quay.io/openshift/origin-kubernetes-nmstate-handler:bench"
	releaseVersion = "4.99.0"
)

var (
	clusterReq  = reconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster"}}
	bareMetalHA = nmstate.Infrastructure{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode}
)

// rendered is what the plugin renders on the sample bare-metal cluster with
// the mode omitted and the default-on gate.
func rendered(manifests, release string) ([]*unstructured.Unstructured, error) {
	network := &unstructured.Unstructured{Object: map[string]any{}}
	res := nmstate.Render(nmstate.Input{Network: network, Infrastructure: bareMetalHA, DefaultOnGate: true,
		Images: nmstate.Images{Handler: image, ReleaseVersion: release}, ManifestDir: manifests})
	return res.Objects, res.Err
}

func main() {
	// The rollout phase's simulated pods have addresses only this program's
	// own network namespace reaches.
	if code, reexeced := devcluster.RunIsolated(false); reexeced {
		os.Exit(code)
	}
	var o options
	flag.StringVar(&o.assets, "assets", "bin", "directory with the binaries `make tools` builds")
	flag.StringVar(&o.root, "root", ".", "the repository root")
	flag.IntVar(&o.runs, "runs", 20, "latency samples")
	flag.StringVar(&o.sizes, "nodes", defaultSizes, "cluster sizes for the memory figures, ascending")
	flag.IntVar(&o.nnsKB, "nns-kb", defaultNNSKB, "size of each NodeNetworkState's status in KB")
	flag.DurationVar(&o.settle, "settle", defaultSettle, "how long a host process runs after its first successful reconcile before its memory is read")
	flag.StringVar(&o.rolloutSizes, "rollout-nodes", defaultRolloutSizes, "kwok cluster sizes for the enable-to-rolled-out figure")
	flag.StringVar(&o.writeDoc, "write-doc", "", "write the measured figures into this file's generated section (docs/resource-budget.md)")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// The defaults are what docs/resource-budget.md's generated section shows.
const (
	defaultSizes        = "0,1000,5000"
	defaultRolloutSizes = "100,1000"
	defaultNNSKB        = 24
	defaultSettle       = 5 * time.Second
)

type options struct {
	assets, root, sizes, rolloutSizes, writeDoc string
	runs, nnsKB                                 int
	settle                                      time.Duration
}

func run(o options) error {
	start := time.Now()
	sizes, err := parseSizes("-nodes", o.sizes)
	if err != nil {
		return err
	}
	rolloutSizes, err := parseSizes("-rollout-nodes", o.rolloutSizes)
	if err != nil {
		return err
	}
	r := results{nnsKB: o.nnsKB, settle: o.settle}
	manifests := filepath.Join(o.root, "bindata")

	fmt.Println("== render cost: nmstate.Render vs CNO's render.RenderDir, same bindata and data")
	if r.render, r.renderDir, err = renderCost(o.root); err != nil {
		return err
	}

	dc, err := devcluster.Start(devcluster.Options{AssetsDir: o.assets, Nodes: devcluster.BareMetalNodes(),
		NetworkCRD: filepath.Join(o.root, "manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml")})
	if err != nil {
		return err
	}
	defer dc.Stop()
	b, err := newBench(dc.Config, manifests)
	if err != nil {
		return err
	}
	if err := b.seed(); err != nil {
		return err
	}

	fmt.Println("== idle write rate: 100 reconciles after convergence")
	if r.idle, r.rvChanges, err = b.idle(false); err != nil {
		return err
	}
	if r.idleBaseline, r.rvChangesBaseline, err = b.idle(true); err != nil {
		return err
	}
	fmt.Printf("  host: %d mutating requests, %d resourceVersion changes; baseline (apply every object each reconcile): %d mutating requests, %d resourceVersion changes\n",
		r.idle, r.rvChanges, r.idleBaseline, r.rvChangesBaseline)

	fmt.Printf("== convergence latency over %d runs\n", o.runs)
	if r.convergeP50, r.convergeP95, err = b.converge(o.runs); err != nil {
		return err
	}
	if r.reflectP50, r.reflectP95, err = b.reflect(o.runs); err != nil {
		return err
	}
	fmt.Printf("  mode patch -> objects applied and conditions written: p50 %s, p95 %s\n", ms(r.convergeP50), ms(r.convergeP95))
	fmt.Printf("  DaemonSet status -> conditions: p50 %s, p95 %s\n", ms(r.reflectP50), ms(r.reflectP95))

	fmt.Printf("== memory of the host's process versus cluster size (%s nodes, NodeNetworkStates of %d KB), beside the same host on controller-runtime's default cache\n", o.sizes, o.nnsKB)
	if r.memory, err = b.memory(dc, o.root, sizes, o.nnsKB, o.settle); err != nil {
		return err
	}

	dc.Stop()

	fmt.Printf("== enable -> every handler pod ready and Available, on %s kwok nodes, beside kubectl apply of the same objects\n", o.rolloutSizes)
	for i, n := range rolloutSizes {
		ro, err := rolloutAt(o.assets, o.root, n, i%2 == 0)
		if err != nil {
			return err
		}
		r.rollouts = append(r.rollouts, ro)
	}
	printRollout(r.rollouts)

	r.took = time.Since(start)
	if r.machine, err = thisMachine(); err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(r.summary())
	if o.writeDoc == "" {
		return nil
	}
	if err := budgetSection.Write(o.writeDoc, r.docSection()); err != nil {
		return err
	}
	fmt.Printf("wrote the figures into %s\n", o.writeDoc)
	return nil
}

// parseSizes reads a comma-separated list of node counts.
func parseSizes(name, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", name, f)
		}
		out = append(out, n)
	}
	return out, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d.Microseconds())/1000) }

// renderCost runs pkg/nmstate's BenchmarkRender, which measures
// nmstate.Render and CNO's render.RenderDir on the same bindata and data
// side by side (the template data is the package's own), and reads its two
// results.
func renderCost(root string) (plugin, cno testing.BenchmarkResult, err error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkRender$", "-benchmem", "./pkg/nmstate")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return plugin, cno, fmt.Errorf("go test -bench BenchmarkRender: %w\n%s", err, out)
	}
	if plugin, cno, err = parseRenderBench(string(out)); err != nil {
		return plugin, cno, err
	}
	fmt.Printf("  Render     %s\n  RenderDir  %s\n", plugin.String()+" "+plugin.MemString(), cno.String()+" "+cno.MemString())
	return plugin, cno, nil
}

// benchLine is one result line of `go test -bench -benchmem`.
var benchLine = regexp.MustCompile(`^BenchmarkRender/(\w+)-\d+\s+(\d+)\s+([\d.]+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op`)

// parseRenderBench reads BenchmarkRender's Render and RenderDir results
// from the output of `go test -bench -benchmem`.
func parseRenderBench(out string) (plugin, cno testing.BenchmarkResult, err error) {
	found := map[string]testing.BenchmarkResult{}
	for _, line := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ns, _ := strconv.ParseFloat(m[3], 64)
		bytes, _ := strconv.ParseUint(m[4], 10, 64)
		allocs, _ := strconv.ParseUint(m[5], 10, 64)
		found[m[1]] = testing.BenchmarkResult{N: n, T: time.Duration(ns * float64(n)), MemBytes: bytes * uint64(n), MemAllocs: allocs * uint64(n)}
	}
	plugin, okPlugin := found["Render"]
	cno, okCNO := found["RenderDir"]
	if !okPlugin || !okCNO {
		return plugin, cno, fmt.Errorf("BenchmarkRender printed no Render and RenderDir results:\n%s", out)
	}
	return plugin, cno, nil
}

type bench struct {
	cfg       *rest.Config
	c         client.Client
	manifests string
	counter   *devcluster.RequestCounter
	host      *controller.Reconciler
	stop      context.CancelFunc
	done      chan error
}

func newBench(cfg *rest.Config, manifests string) (*bench, error) {
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return &bench{cfg: cfg, c: c, manifests: manifests, counter: &devcluster.RequestCounter{}}, nil
}

func (b *bench) ctx() context.Context { return context.Background() }

func (b *bench) seed() error {
	ha := configv1.HighlyAvailableTopologyMode
	if err := devcluster.CreateInfrastructure(b.ctx(), b.c, configv1.BareMetalPlatformType, ha, ha); err != nil {
		return err
	}
	return devcluster.CreateNetwork(b.ctx(), b.c, nil)
}

// startHost (re)starts the host; its requests go through the counter.
func (b *bench) startHost(applyEvery bool) error {
	b.stopHost()
	cfg := rest.CopyConfig(b.cfg)
	cfg.WrapTransport = b.counter.Wrap
	mgr, err := controller.NewManager(cfg, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		return err
	}
	b.host, err = controller.Setup(mgr, controller.Options{ManifestDir: b.manifests, DefaultOnGate: true, ApplyEveryReconcile: applyEvery,
		Images: nmstate.Images{Handler: image, ReleaseVersion: releaseVersion}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop, b.done = cancel, make(chan error, 1)
	go func() { b.done <- mgr.Start(ctx) }()
	return b.waitFor(func() (bool, error) { return b.reason(nmstate.ConditionProgressing) != "", nil })
}

func (b *bench) stopHost() {
	if b.stop != nil {
		b.stop()
		<-b.done
		b.stop = nil
	}
}

func (b *bench) conditions() (map[string]operv1.OperatorCondition, error) {
	return devcluster.Conditions(b.ctx(), b.c)
}

func (b *bench) reason(typ string) string {
	conds, err := b.conditions()
	if err != nil {
		return ""
	}
	return conds[typ].Reason
}

// waitFor polls every 2ms, fine enough for the latency figures.
func (b *bench) waitFor(cond func() (bool, error)) error {
	return wait.PollUntilContextTimeout(b.ctx(), 2*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return cond() })
}

func (b *bench) setMode(mode string) error {
	return devcluster.PatchNetwork(b.ctx(), b.c, fmt.Sprintf(`{"spec":{"kubernetesNMState":{"mode":%q}}}`, mode))
}

// handlersReady waits until the DaemonSet controller reports n ready
// handlers and returns when it first saw that.
func (b *bench) handlersReady(n int32) (time.Time, error) {
	var seen time.Time
	err := b.waitFor(func() (bool, error) {
		ds := &appsv1.DaemonSet{}
		if err := b.c.Get(b.ctx(), client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		seen = time.Now()
		return ds.Status.ObservedGeneration == ds.Generation && ds.Status.NumberReady == n && ds.Status.DesiredNumberScheduled == n, nil
	})
	return seen, err
}

func (b *bench) resourceVersions() (map[string]string, error) {
	objs, err := rendered(b.manifests, releaseVersion)
	if err != nil {
		return nil, err
	}
	return devcluster.ResourceVersions(b.ctx(), b.c, objs)
}

// idle converges, then counts what 100 reconciles with nothing changed send.
func (b *bench) idle(applyEvery bool) (mutating, rvChanges int, err error) {
	if err := b.startHost(applyEvery); err != nil {
		return 0, 0, err
	}
	if err := b.waitFor(func() (bool, error) {
		err := b.c.Get(b.ctx(), client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, &appsv1.DaemonSet{})
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		return 0, 0, fmt.Errorf("converging: %w", err)
	}
	if _, err := b.handlersReady(6); err != nil {
		return 0, 0, err
	}
	if err := b.waitFor(func() (bool, error) { return b.reason(nmstate.ConditionProgressing) == nmstate.ReasonAsExpected, nil }); err != nil {
		return 0, 0, fmt.Errorf("rollout: %w", err)
	}
	if _, err := b.host.Reconcile(b.ctx(), clusterReq); err != nil {
		return 0, 0, err
	}
	before, err := b.resourceVersions()
	if err != nil {
		return 0, 0, err
	}
	b.counter.Reset()
	for i := 0; i < 100; i++ {
		if _, err := b.host.Reconcile(b.ctx(), clusterReq); err != nil {
			return 0, 0, err
		}
	}
	mutating = b.counter.Mutating()
	after, err := b.resourceVersions()
	if err != nil {
		return 0, 0, err
	}
	for k, v := range before {
		if after[k] != v {
			rvChanges++
		}
	}
	return mutating, rvChanges, nil
}

// converge times mode patches (Disabled -> Enabled) until the conditions say
// the new decision, which the host writes after applying every object.
func (b *bench) converge(runs int) (p50, p95 time.Duration, err error) {
	if err := b.startHost(false); err != nil {
		return 0, 0, err
	}
	var samples []time.Duration
	for i := 0; i < runs; i++ {
		if err := b.setMode("Disabled"); err != nil {
			return 0, 0, err
		}
		if err := b.waitFor(func() (bool, error) {
			return b.reason(nmstate.ConditionAvailable) == nmstate.ReasonUserDisabled, nil
		}); err != nil {
			return 0, 0, fmt.Errorf("disabling: %w", err)
		}
		start := time.Now()
		if err := b.setMode("Enabled"); err != nil {
			return 0, 0, err
		}
		// Available follows the new decision (the real rollout may already
		// be done by then: kwok's pods are ready at once).
		if err := b.waitFor(func() (bool, error) {
			r := b.reason(nmstate.ConditionAvailable)
			return r == nmstate.ReasonUserEnabled || r == nmstate.ReasonDeploying, nil
		}); err != nil {
			return 0, 0, fmt.Errorf("enabling: %w", err)
		}
		samples = append(samples, time.Since(start))
		if err := b.c.Get(b.ctx(), client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, &appsv1.DaemonSet{}); err != nil {
			return 0, 0, fmt.Errorf("conditions written before the handler was applied: %w", err)
		}
	}
	p50, p95 = percentiles(samples)
	return p50, p95, nil
}

// reflect times DaemonSet status changes, as its controller writes them
// when a Linux node enters or leaves the handler's nodeSelector, until the
// conditions show them. (Deleting the node would not do: the DaemonSet
// controller has no handler for a deleted Node and recounts only once the
// pod garbage collector removes the pod left on it, after a fixed 40s
// quarantine.)
func (b *bench) reflect(runs int) (p50, p95 time.Duration, err error) {
	var samples []time.Duration
	extra := devcluster.LinuxWorker("worker-bench")
	delete(extra.Labels, "kubernetes.io/os")
	if err := devcluster.CreateNodes(b.ctx(), b.c, []devcluster.Node{extra}); err != nil {
		return 0, 0, err
	}
	for i := 0; i < runs; i++ {
		want, osLabel := int32(7), `"linux"`
		if i%2 == 1 {
			want, osLabel = 6, "null"
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: extra.Name}}
		patch := []byte(`{"metadata":{"labels":{"kubernetes.io/os":` + osLabel + `}}}`)
		if err := b.c.Patch(b.ctx(), node, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return 0, 0, fmt.Errorf("relabelling node %s: %w", extra.Name, err)
		}
		start, err := b.handlersReady(want)
		if err != nil {
			return 0, 0, fmt.Errorf("waiting for %d ready handlers: %w", want, err)
		}
		msg := fmt.Sprintf("handler ready on %d of %d nodes", want, want)
		if err := b.waitFor(func() (bool, error) {
			conds, err := b.conditions()
			return strings.Contains(conds[nmstate.ConditionProgressing].Message, msg), err
		}); err != nil {
			return 0, 0, fmt.Errorf("waiting for %q: %w", msg, err)
		}
		samples = append(samples, time.Since(start))
	}
	p50, p95 = percentiles(samples)
	return p50, p95, nil
}

func percentiles(samples []time.Duration) (p50, p95 time.Duration) {
	return quantile.Of(samples, 0.50), quantile.Of(samples, 0.95)
}
