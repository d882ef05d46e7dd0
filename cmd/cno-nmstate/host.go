package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cno-nmstate/cno-nmstate/bindata"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
)

// manifestDir returns dir, or the built-in manifests written to a temporary
// directory (removed by the returned func).
func manifestDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "cno-nmstate-bindata-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	if err := bindata.WriteTo(tmp); err != nil {
		cleanup()
		return "", nil, err
	}
	return tmp, cleanup, nil
}

// leaderElection makes a host act only while it holds the Lease
// namespace/name. The library leaves this to its caller: CNO runs the plugin
// under its own lock.
func leaderElection(namespace, name string) ctrl.Options {
	return ctrl.Options{
		LeaderElection:             true,
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaderElectionNamespace:    namespace,
		LeaderElectionID:           name,
		// The process ends when the manager returns, so it can give the
		// Lease up: a waiting host takes over within its retry period (2s)
		// instead of after the lease duration (15s).
		LeaderElectionReleaseOnCancel: true,
	}
}

// startHost runs the plugin host against cfg until ctx ends; the returned
// channel yields the manager's exit error (a lost Lease included).
func startHost(ctx context.Context, cfg *rest.Config, mgrOpts ctrl.Options, opts controller.Options) (<-chan error, error) {
	mgrOpts.Metrics = metricsserver.Options{BindAddress: "0"}
	mgr, err := controller.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, err
	}
	if _, err := controller.Setup(mgr, opts); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		if err := mgr.Start(ctx); err != nil {
			done <- fmt.Errorf("running the host: %w", err)
		}
		close(done)
	}()
	return done, nil
}
