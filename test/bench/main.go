// Command bench measures the plugin host's resource budget against a real
// kube-apiserver and etcd, each figure beside its baseline from the same run,
// and ends with a summary that scripts can read (see docs/resource-budget.md).
// Run it with `make bench`.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/cluster-network-operator/pkg/render"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const image = "quay.io/openshift/origin-kubernetes-nmstate-handler:bench"

var (
	clusterReq  = reconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster"}}
	bareMetalHA = nmstate.Cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode, DefaultOnGate: true}
)

func main() {
	// The rollout phase's simulated pods have addresses only this program's
	// own network namespace reaches.
	if code, reexeced := devcluster.RunIsolated(false); reexeced {
		os.Exit(code)
	}
	assets := flag.String("assets", "bin", "directory with the binaries `make tools` builds")
	root := flag.String("root", ".", "the repository root")
	runs := flag.Int("runs", 20, "latency samples")
	sizes := flag.String("nodes", "0,1000,5000", "cluster sizes for the memory figure, ascending")
	nnsKB := flag.Int("nns-kb", 24, "size of each NodeNetworkState's status in KB")
	rolloutSizes := flag.String("rollout-nodes", "100,1000", "kwok cluster sizes for the enable-to-rolled-out figure")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	if err := run(*assets, *root, *runs, *sizes, *nnsKB, *rolloutSizes); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type summary struct {
	idle, idleBaseline, rvChanges         int
	growthMB, growthBaselineMB            float64
	convergeP50, convergeP95, reflectP50  time.Duration
	reflectP95                            time.Duration
	renderRatio                           float64
	requestsPerReconcile, requestsLargest int
	largest                               int
}

func run(assets, root string, runs int, sizes string, nnsKB int, rolloutSizes string) error {
	var s summary
	manifests := filepath.Join(root, "bindata")

	fmt.Println("== render cost: nmstate.Render vs CNO's render.RenderDir, same bindata and data")
	s.renderRatio = renderRatio(manifests)

	dc, err := devcluster.Start(devcluster.Options{AssetsDir: assets, Nodes: devcluster.BareMetalNodes(),
		NetworkCRD: filepath.Join(root, "manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml")})
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
	if s.idle, s.rvChanges, err = b.idle(false); err != nil {
		return err
	}
	if s.idleBaseline, _, err = b.idle(true); err != nil {
		return err
	}
	fmt.Printf("  host: %d mutating requests, %d resourceVersion changes; baseline (apply every object each reconcile): %d\n", s.idle, s.rvChanges, s.idleBaseline)

	fmt.Printf("== convergence latency over %d runs\n", runs)
	if s.convergeP50, s.convergeP95, err = b.converge(runs); err != nil {
		return err
	}
	if s.reflectP50, s.reflectP95, err = b.reflect(runs); err != nil {
		return err
	}
	fmt.Printf("  mode patch -> objects applied and conditions written: p50 %s, p95 %s\n", ms(s.convergeP50), ms(s.convergeP95))
	fmt.Printf("  DaemonSet status -> conditions: p50 %s, p95 %s\n", ms(s.reflectP50), ms(s.reflectP95))

	fmt.Printf("== memory versus cluster size (%s nodes, NodeNetworkStates of %d KB)\n", sizes, nnsKB)
	if err := b.memory(sizes, nnsKB, &s); err != nil {
		return err
	}

	dc.Stop()

	fmt.Printf("== enable -> every handler pod ready and Available, on %s kwok nodes, beside kubectl apply of the same objects\n", rolloutSizes)
	var rollouts []rolloutResult
	for i, f := range strings.Split(rolloutSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-rollout-nodes: %q is not a number", f)
		}
		r, err := rolloutAt(assets, root, n, i%2 == 0)
		if err != nil {
			return err
		}
		rollouts = append(rollouts, r)
	}
	printRollout(rollouts)

	fmt.Println()
	fmt.Printf("idle_mutating_requests: %d (baseline %d)\n", s.idle, s.idleBaseline)
	fmt.Printf("memory_growth_mb_5000_nodes: %.1f (baseline %.1f)\n", round1(s.growthMB), round1(s.growthBaselineMB))
	fmt.Printf("converge_p50_ms: %d (p95 %d)\n", s.convergeP50.Milliseconds(), s.convergeP95.Milliseconds())
	fmt.Printf("status_reflect_p50_ms: %d\n", s.reflectP50.Milliseconds())
	fmt.Printf("render_ratio_vs_renderdir: %.2f\n", s.renderRatio)
	fmt.Printf("requests_per_reconcile_at_%d_nodes: %d (at 0 nodes %d)\n", s.largest, s.requestsLargest, s.requestsPerReconcile)
	for _, r := range rollouts {
		fmt.Printf("rollout_ratio_vs_kubectl_at_%d_nodes: %.2f (host %.1fs, kubectl %.1fs)\n", r.nodes, r.host.Seconds()/r.kubectl.Seconds(), r.host.Seconds(), r.kubectl.Seconds())
	}
	if len(rollouts) > 0 {
		first, last := rollouts[0], rollouts[len(rollouts)-1]
		fmt.Printf("rollout_heap_mb: %.1f at %d nodes, %.1f at %d nodes\n", first.hostHeapMB, first.nodes, last.hostHeapMB, last.nodes)
	}
	return nil
}

// round1 rounds to one decimal without printing "-0.0".
func round1(x float64) float64 { return math.Round(x*10)/10 + 0 }

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d.Microseconds())/1000) }

func renderRatio(manifests string) float64 {
	d := nmstate.Decide(nmstate.Config{}, bareMetalHA)
	p := nmstate.NewRenderParams(nmstate.Config{}, bareMetalHA, image, "4.99.0")
	plugin := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := nmstate.Render(d, p, manifests); err != nil {
				b.Fatal(err)
			}
		}
	})
	cno := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			data := nmstate.RenderData(p)
			if _, err := render.RenderDir(filepath.Join(manifests, nmstate.ManifestSubdir), &data); err != nil {
				b.Fatal(err)
			}
		}
	})
	fmt.Printf("  Render     %s\n  RenderDir  %s\n", plugin.String()+" "+plugin.MemString(), cno.String()+" "+cno.MemString())
	return float64(plugin.NsPerOp()) / float64(cno.NsPerOp())
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
		Params: func(cfg nmstate.Config, c nmstate.Cluster) nmstate.RenderParams {
			return nmstate.NewRenderParams(cfg, c, image, "4.99.0")
		}})
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
	objs, err := nmstate.Render(nmstate.Decide(nmstate.Config{}, bareMetalHA), nmstate.NewRenderParams(nmstate.Config{}, bareMetalHA, image, "4.99.0"), b.manifests)
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
			return b.reason(nmstate.ConditionProgressing) == nmstate.ReasonUserDisabled, nil
		}); err != nil {
			return 0, 0, fmt.Errorf("disabling: %w", err)
		}
		start := time.Now()
		if err := b.setMode("Enabled"); err != nil {
			return 0, 0, err
		}
		// The conditions follow the new decision (the real rollout may
		// already be done by then: kwok's pods are ready at once).
		if err := b.waitFor(func() (bool, error) {
			r := b.reason(nmstate.ConditionProgressing)
			return r == nmstate.ReasonRollingOut || r == nmstate.ReasonDeploying || r == nmstate.ReasonAsExpected, nil
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
			return strings.Contains(conds[nmstate.ConditionAvailable].Message, msg), err
		}); err != nil {
			return 0, 0, fmt.Errorf("waiting for %q: %w", msg, err)
		}
		samples = append(samples, time.Since(start))
	}
	p50, p95 = percentiles(samples)
	return p50, p95, nil
}

func percentiles(samples []time.Duration) (p50, p95 time.Duration) {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	at := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1)+0.5)] }
	return at(0.50), at(0.95)
}

func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// memory grows the cluster and reads the host's heap after GC at each size,
// beside a plain informer on NodeNetworkStates at the largest size.
func (b *bench) memory(sizes string, nnsKB int, s *summary) error {
	var counts []int
	for _, f := range strings.Split(sizes, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil {
			return fmt.Errorf("-nodes %q: %w", sizes, err)
		}
		counts = append(counts, n)
	}
	if err := b.startHost(false); err != nil {
		return err
	}
	var first float64
	created := 0
	for i, n := range counts {
		if err := createNodes(b.c, created, n, nnsKB); err != nil {
			return err
		}
		created = n
		// Count the second reconcile at this size: the first after a start
		// applies everything once.
		for range 2 {
			b.counter.Reset()
			if _, err := b.host.Reconcile(b.ctx(), clusterReq); err != nil {
				return err
			}
		}
		reqs := b.counter.Total()
		heap := heapMB()
		if i == 0 {
			first, s.requestsPerReconcile = heap, reqs
		}
		s.growthMB, s.requestsLargest, s.largest = heap-first, reqs, n
		fmt.Printf("  %5d nodes: host heap %.1f MB (growth %.1f MB), %d requests per reconcile\n", n, heap, heap-first, reqs)
	}

	before := heapMB()
	dyn, err := dynamic.NewForConfig(b.cfg)
	if err != nil {
		return err
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	informer := factory.ForResource(schema.GroupVersionResource{Group: "nmstate.io", Version: "v1beta1", Resource: "nodenetworkstates"}).Informer()
	stop := make(chan struct{})
	go informer.Run(stop)
	for !informer.HasSynced() {
		time.Sleep(50 * time.Millisecond)
	}
	s.growthBaselineMB = heapMB() - before
	runtime.KeepAlive(informer)
	close(stop)
	fmt.Printf("  baseline: a plain informer on NodeNetworkStates holds %.1f MB at %d nodes\n", s.growthBaselineMB, created)
	b.stopHost()
	return nil
}

// createNodes creates Nodes and their NodeNetworkStates from index from to to.
func createNodes(c client.Client, from, to, nnsKB int) error {
	const workers = 8
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			for i := from + w; i < to; i += workers {
				if err := createNode(c, fmt.Sprintf("worker-%05d", i), nnsKB); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func createNode(c client.Client, name string, nnsKB int) error {
	ctx := context.Background()
	// No kubernetes.io/os label: the handler's nodeSelector keeps the real
	// DaemonSet controller from placing thousands of pods that no kubelet
	// would run; the host reads no Node either way.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"node-role.kubernetes.io/worker": ""}}}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	nns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nmstate.io/v1beta1", "kind": "NodeNetworkState", "metadata": map[string]any{"name": name}}}
	if err := c.Create(ctx, nns); err != nil {
		return fmt.Errorf("creating NodeNetworkState %s: %w", name, err)
	}
	nns.Object["status"] = map[string]any{"currentState": interfaceState(nnsKB), "lastSuccessfulUpdateTime": time.Now().UTC().Format(time.RFC3339)}
	if err := c.Status().Update(ctx, nns); err != nil {
		return fmt.Errorf("writing NodeNetworkState %s status: %w", name, err)
	}
	return nil
}

// interfaceState is a node's network state as nmstate reports it, with as
// many interfaces as it takes to reach about kb kilobytes.
func interfaceState(kb int) map[string]any {
	var ifaces []any
	size := 0
	for i := 0; size < kb*1024; i++ {
		iface := map[string]any{
			"name": fmt.Sprintf("ens%df0", i), "type": "ethernet", "state": "up", "mtu": int64(1500),
			"mac-address": fmt.Sprintf("52:54:00:%02x:%02x:%02x", i/65536%256, i/256%256, i%256),
			"ipv4": map[string]any{"enabled": true, "dhcp": false, "address": []any{
				map[string]any{"ip": fmt.Sprintf("192.0.2.%d", i%250+1), "prefix-length": int64(24)}}},
			"ipv6": map[string]any{"enabled": true, "autoconf": true, "address": []any{
				map[string]any{"ip": fmt.Sprintf("2001:db8::%x", i+1), "prefix-length": int64(64)}}},
			"ethernet": map[string]any{"auto-negotiation": true, "speed": int64(25000), "duplex": "full"},
			"ethtool": map[string]any{"feature": map[string]any{"rx-checksum": true, "tx-checksum-ip-generic": true,
				"tx-generic-segmentation": true, "rx-gro": true, "rx-lro": false, "tx-tcp-segmentation": true}},
			"lldp": map[string]any{"enabled": false}, "accept-all-mac-addresses": false,
		}
		size += 700
		ifaces = append(ifaces, iface)
	}
	return map[string]any{"interfaces": ifaces, "dns-resolver": map[string]any{"running": map[string]any{"server": []any{"192.0.2.53"}}},
		"routes": map[string]any{"running": []any{map[string]any{"destination": "0.0.0.0/0", "next-hop-address": "192.0.2.1", "next-hop-interface": "ens0f0"}}}}
}
