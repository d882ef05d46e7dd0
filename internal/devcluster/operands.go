package devcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/loopdns"
	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// HandlerBinary is upstream kubernetes-nmstate's cmd/handler as `make tools`
// builds it into the assets directory; its image runs it as "manager".
const HandlerBinary = "kubernetes-nmstate-handler"

// dnsAddr is where the node's DNS server is stood in for: the port upstream's
// probe dials, free in the network namespace of RunIsolated.
const dnsAddr = "127.0.0.53:53"

// Operands runs upstream's own binary as the operands' containers
// (podproc), with what needs a real node or another operator stood in for:
// nmstatectl and ping (test/nodestub), the node's DNS server (loopdns) and
// OpenShift's service CA (ServiceCA). Nothing else is.
type Operands struct {
	Runner *podproc.Runner
	DNS    *loopdns.Server
	// NodeDir holds the stubs, the node's state.json and the applied.log
	// where the nmstatectl stand-in records what the handler applied.
	NodeDir string
	cancel  context.CancelFunc
	done    chan struct{}
}

// StartOperands builds the stubs into dir, serves the node's DNS and starts
// the service CA stand-in. assets holds HandlerBinary.
func StartOperands(cfg *rest.Config, c client.Client, assets, dir string) (_ *Operands, err error) {
	bin, err := filepath.Abs(filepath.Join(assets, HandlerBinary))
	if err != nil {
		return nil, fmt.Errorf("locating %s: %w", HandlerBinary, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no %s in %s (build it with `make tools`): %w", HandlerBinary, assets, err)
	}
	nodeDir := filepath.Join(dir, "node")
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the node's directory: %w", err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(nodeDir, "nmstatectl"),
		"github.com/cno-nmstate/cno-nmstate/test/nodestub").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the nmstatectl stand-in (run from the source tree): %w: %s", err, out)
	}
	if err := os.Symlink("nmstatectl", filepath.Join(nodeDir, "ping")); err != nil {
		return nil, fmt.Errorf("linking the ping stand-in: %w", err)
	}
	dns, err := loopdns.Start(dnsAddr)
	if err != nil {
		return nil, fmt.Errorf("serving the node's DNS for the handler's probe: %w", err)
	}
	defer func() {
		if err != nil {
			_ = dns.Close()
		}
	}()
	host, _, _ := net.SplitHostPort(dnsAddr)
	state, err := json.Marshal(NodeState(host))
	if err != nil {
		return nil, fmt.Errorf("encoding the node's state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(nodeDir, "state.json"), state, 0o644); err != nil {
		return nil, fmt.Errorf("writing the node's state: %w", err)
	}
	ca, err := NewServiceCA(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &Operands{DNS: dns, NodeDir: nodeDir, cancel: cancel, done: make(chan struct{}),
		Runner: &podproc.Runner{
			Config:   cfg,
			Binaries: map[string]string{"manager": bin},
			PathDirs: []string{nodeDir},
			Dir:      filepath.Join(dir, "pods"),
		}}
	go func() { ca.Run(ctx, 200*time.Millisecond); close(o.done) }()
	return o, nil
}

// Close stops the service CA and the DNS server; the processes the Runner
// started are their starters' to stop.
func (o *Operands) Close() error {
	o.cancel()
	<-o.done
	return o.DNS.Close()
}

// NodeState is what nmstatectl show reports on every simulated node:
// loopback only, with the default route's gateway and the DNS server on
// loopback, so that no probe of the handler leaves the machine.
func NodeState(dnsServer string) map[string]any {
	return map[string]any{
		"interfaces": []any{map[string]any{
			"name": "lo", "type": "loopback", "state": "up",
			"ipv4": map[string]any{"enabled": true, "address": []any{map[string]any{"ip": "127.0.0.1", "prefix-length": 8}}},
		}},
		"routes": map[string]any{
			"running": []any{map[string]any{"destination": "0.0.0.0/0", "next-hop-address": "127.0.0.1", "next-hop-interface": "lo", "table-id": 254}},
			"config":  []any{},
		},
		"dns-resolver": map[string]any{"running": map[string]any{"server": []any{dnsServer}}, "config": map[string]any{}},
	}
}

// BoundPod is a live pod of the rendered workload (its "name" label) that
// the scheduler has bound to node ("" for any node), or nil while there is
// none: the pod whose container a test or the demo runs.
func BoundPod(ctx context.Context, c client.Reader, workload, node string) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"name": workload}); err != nil {
		return nil, fmt.Errorf("listing %s pods: %w", workload, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" && (node == "" || p.Spec.NodeName == node) {
			return p, nil
		}
	}
	return nil, nil
}
