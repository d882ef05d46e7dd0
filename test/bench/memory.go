package main

// Memory versus cluster size: the host in a process of its own, beside the
// same host on controller-runtime's default, unfiltered cache, at each size.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/test/bench/reconciles"
)

// memorySample is one cluster size's figures.
type memorySample struct {
	nodes    int
	requests int        // API requests of an idle reconcile
	scoped   hostMemory // the host as `cno-nmstate run` builds it
	unscoped hostMemory // the same host on controller-runtime's default cache
}

// memory grows the cluster to each size and there counts an idle
// reconcile's requests, then runs the host, scoped and unscoped, each in a
// process started afresh so that its cache lists the cluster as it is now.
// After its first successful reconcile a host is left settle to quiet down
// before it is read.
func (b *bench) memory(dc *devcluster.Cluster, root string, sizes []int, nnsKB int, settle time.Duration) ([]memorySample, error) {
	bin, err := buildHostProc(root, dc.Dir)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dc.Dir, "bench-host.kubeconfig")
	if err := os.WriteFile(kubeconfig, dc.Kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the host's kubeconfig: %w", err)
	}
	measure := func(n int, defaultCache bool) (hostMemory, error) {
		log := filepath.Join(dc.Dir, fmt.Sprintf("host-%d-nodes-default-cache-%t.log", n, defaultCache))
		h, err := startHostProcess(bin, kubeconfig, b.manifests, log, defaultCache)
		if err != nil {
			return hostMemory{}, err
		}
		time.Sleep(settle)
		m, err := h.measure()
		return m, errors.Join(err, h.stop())
	}
	var out []memorySample
	created := 0
	for _, n := range sizes {
		if err := createNodes(b.c, created, n, nnsKB); err != nil {
			return nil, err
		}
		created = n
		s := memorySample{nodes: n}
		if s.requests, err = b.idleRequests(); err != nil {
			return nil, err
		}
		if s.scoped, err = measure(n, false); err != nil {
			return nil, err
		}
		if s.unscoped, err = measure(n, true); err != nil {
			return nil, err
		}
		fmt.Printf("  %5d nodes: host RSS %.1f MB, heap %.1f MB; default cache RSS %.1f MB, heap %.1f MB; %d requests per idle reconcile\n",
			n, s.scoped.rssMB, s.scoped.heapMB, s.unscoped.rssMB, s.unscoped.heapMB, s.requests)
		out = append(out, s)
	}
	return out, nil
}

// idleRequests counts the requests of an idle reconcile: that of a host
// started afresh, once its manager's own first reconcile, which applies
// everything once, is done. Nothing else of the host runs meanwhile (its
// next recheck is RecheckInterval away), so every request counted is the
// reconcile's, discovery included.
func (b *bench) idleRequests() (int, error) {
	before, err := reconciles.Done(reconciles.Synced)
	if err != nil {
		return 0, err
	}
	if err := b.startHost(false); err != nil {
		return 0, err
	}
	defer b.stopHost()
	if err := wait.PollUntilContextTimeout(b.ctx(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		n, err := reconciles.Done(reconciles.Synced)
		return n > before, err
	}); err != nil {
		return 0, fmt.Errorf("waiting for the host's first reconcile: %w", err)
	}
	b.counter.Reset()
	if _, err := b.host.Reconcile(b.ctx(), clusterReq); err != nil {
		return 0, fmt.Errorf("idle reconcile: %w", err)
	}
	sent := b.counter.Matching("/")
	sort.Strings(sent)
	fmt.Printf("  an idle reconcile sent: %s\n", strings.Join(sent, ", "))
	return b.counter.Total(), nil
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
