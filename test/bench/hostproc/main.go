// Command hostproc is the plugin host as `cno-nmstate run` builds it
// (controller.NewManager and controller.Setup, images from the environment),
// in a process of its own so that the bench reads the host's memory alone.
// With -default-cache it is the same host on controller-runtime's default,
// unfiltered cache: the bench's memory baseline.
//
// It talks to the bench over two pipes: it writes "ready" on file
// descriptor 3 after its first successful reconcile, then answers every line
// it reads on stdin with its heap in use after a GC, in bytes, on fd 3.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/test/bench/reconciles"
)

func main() {
	manifests := flag.String("manifests", "", "bindata root to render from")
	defaultCache := flag.Bool("default-cache", false, "controller-runtime's default, unfiltered cache instead of the host's scoped one")
	flag.Parse()
	if err := run(*manifests, *defaultCache); err != nil {
		fmt.Fprintln(os.Stderr, "hostproc:", err)
		os.Exit(1)
	}
}

func run(manifests string, defaultCache bool) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	// From $KUBECONFIG (or controller-runtime's own -kubeconfig flag).
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	opts := ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}}
	if defaultCache {
		// NewManager sets the scoped cache.Options; this drops the scoping
		// from them and keeps everything else NewManager sets up.
		opts.NewCache = func(cfg *rest.Config, o cache.Options) (cache.Cache, error) {
			return cache.New(cfg, withoutScoping(o))
		}
	}
	mgr, err := controller.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, controller.Options{ManifestDir: manifests, DefaultOnGate: true}); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	reply := os.NewFile(3, "reply")
	if err := waitReconciled(ctx); err != nil {
		return err
	}
	fmt.Fprintln(reply, "ready")
	go answerHeap(os.Stdin, reply)
	if err := <-done; err != nil {
		return fmt.Errorf("running the host: %w", err)
	}
	return nil
}

// withoutScoping is o without what controller.CacheOptions sets: the cache
// of a host that would watch the same kinds with no selector at all.
func withoutScoping(o cache.Options) cache.Options {
	o.DefaultLabelSelector = nil
	o.ByObject = nil
	return o
}

// waitReconciled waits for the host's first reconcile that applied every
// object and wrote its status.
func waitReconciled(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		n, err := reconciles.Done(reconciles.Synced)
		return n > 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the first successful reconcile: %w", err)
	}
	return nil
}

// answerHeap writes the heap in use after a GC for every line it reads.
func answerHeap(in io.Reader, out io.Writer) {
	for s := bufio.NewScanner(in); s.Scan(); {
		// The second GC frees what finalizers released in the first.
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprintln(out, m.HeapInuse)
	}
}
