package main

// Enable → rolled out on kwok nodes: the host against what a user could do by
// hand (kubectl apply of the same rendered objects), on fresh clusters of the
// same size, with the real DaemonSet and Deployment controllers and
// kube-scheduler doing the rollout.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// rolloutResult is one cluster size's figures.
type rolloutResult struct {
	nodes          int
	host, kubectl  time.Duration
	hostHeapMB     float64 // live heap with the host running, after the rollout
	hostHeapIdleMB float64 // the same before the cluster had any pod of ours
}

func workers(n int) []devcluster.Node {
	out := make([]devcluster.Node, n)
	for i := range out {
		out[i] = devcluster.LinuxWorker(fmt.Sprintf("worker-%04d", i))
	}
	return out
}

// rolloutAt measures both ways on n nodes; the kubectl baseline runs first
// on the smaller size and second on the larger, so that neither always gets
// the warmer machine.
func rolloutAt(assets, root string, n int, kubectlFirst bool) (rolloutResult, error) {
	r := rolloutResult{nodes: n}
	order := []func() error{
		func() (err error) {
			r.host, r.hostHeapIdleMB, r.hostHeapMB, err = hostRollout(assets, root, n)
			return err
		},
		func() (err error) { r.kubectl, err = kubectlRollout(assets, root, n); return err },
	}
	if kubectlFirst {
		order[0], order[1] = order[1], order[0]
	}
	for _, f := range order {
		if err := f(); err != nil {
			return r, err
		}
	}
	return r, nil
}

func rolloutCluster(assets, root string, n int) (*devcluster.Cluster, client.Client, error) {
	dc, err := devcluster.Start(devcluster.Options{AssetsDir: assets, Nodes: workers(n),
		NetworkCRD: filepath.Join(root, "manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml")})
	if err != nil {
		return nil, nil, err
	}
	b, err := newBench(dc.Config, filepath.Join(root, "bindata"))
	if err != nil {
		_ = dc.Stop()
		return nil, nil, err
	}
	ha := configv1.HighlyAvailableTopologyMode
	if err := devcluster.CreateInfrastructure(b.ctx(), b.c, configv1.BareMetalPlatformType, ha, ha); err != nil {
		_ = dc.Stop()
		return nil, nil, err
	}
	return dc, b.c, nil
}

// hostRollout: the host runs with mode Disabled; the clock starts at the
// patch to Enabled and stops when every handler pod is ready and Available
// is True.
func hostRollout(assets, root string, n int) (took time.Duration, idleMB, rolledMB float64, err error) {
	dc, c, err := rolloutCluster(assets, root, n)
	if err != nil {
		return 0, 0, 0, err
	}
	defer dc.Stop()
	if err := devcluster.CreateNetwork(context.Background(), c, map[string]any{"mode": "Disabled"}); err != nil {
		return 0, 0, 0, err
	}
	b, err := newBench(dc.Config, filepath.Join(root, "bindata"))
	if err != nil {
		return 0, 0, 0, err
	}
	if err := b.startHost(false); err != nil {
		return 0, 0, 0, err
	}
	defer b.stopHost()
	idleMB = heapMB()
	start := time.Now()
	if err := b.setMode("Enabled"); err != nil {
		return 0, 0, 0, err
	}
	if err := waitRolledOut(c, n, func() (bool, error) {
		conds, err := b.conditions()
		return conds[nmstate.ConditionAvailable].Status == operv1.ConditionTrue, err
	}); err != nil {
		return 0, 0, 0, fmt.Errorf("host rollout on %d nodes: %w", n, err)
	}
	return time.Since(start), idleMB, heapMB(), nil
}

// kubectlRollout: the same rendered objects in one file; the clock starts
// at `kubectl apply` and stops when every handler pod is ready.
func kubectlRollout(assets, root string, n int) (time.Duration, error) {
	dc, c, err := rolloutCluster(assets, root, n)
	if err != nil {
		return 0, err
	}
	defer dc.Stop()
	objs, err := rendered(filepath.Join(root, "bindata"), releaseVersion)
	if err != nil {
		return 0, err
	}
	var docs []byte
	for _, o := range objs {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			return 0, err
		}
		docs = append(append(docs, "---\n"...), y...)
	}
	kubeconfig := filepath.Join(dc.Dir, "bench.kubeconfig")
	manifest := filepath.Join(dc.Dir, "rendered.yaml")
	if err := os.WriteFile(kubeconfig, dc.Kubeconfig, 0o600); err != nil {
		return 0, err
	}
	if err := os.WriteFile(manifest, docs, 0o600); err != nil {
		return 0, err
	}
	start := time.Now()
	// Twice, as a user would when the first apply races the CRDs and the
	// namespace it creates; the second is a no-op otherwise.
	for i := 0; i < 2; i++ {
		out, err := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", kubeconfig, "apply", "-f", manifest).CombinedOutput()
		if err != nil && i == 1 {
			return 0, fmt.Errorf("kubectl apply: %w: %s", err, out)
		}
	}
	if err := waitRolledOut(c, n, func() (bool, error) { return true, nil }); err != nil {
		return 0, fmt.Errorf("kubectl rollout on %d nodes: %w", n, err)
	}
	return time.Since(start), nil
}

// waitRolledOut waits until the DaemonSet controller reports a ready handler
// pod on each of the n nodes, the webhook is available, and done holds.
func waitRolledOut(c client.Client, n int, done func() (bool, error)) error {
	ctx := context.Background()
	return wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		ds := &appsv1.DaemonSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.WebhookDeployment}, dep); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if ds.Status.NumberReady != int32(n) || dep.Status.AvailableReplicas == 0 {
			return false, nil
		}
		return done()
	})
}

// heapMB is this process's heap after GC: the bench's own clients and the
// in-process host together.
func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

func printRollout(results []rolloutResult) {
	for _, r := range results {
		fmt.Printf("  %d nodes: host %s, kubectl apply %s, ratio %.2f; heap of the process running the host %.1f MB before, %.1f MB after\n",
			r.nodes, r.host.Round(time.Millisecond), r.kubectl.Round(time.Millisecond),
			r.host.Seconds()/r.kubectl.Seconds(), r.hostHeapIdleMB, r.hostHeapMB)
	}
}
