package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
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

// startHost runs the plugin host against cfg until ctx ends; the returned
// channel yields the manager's exit error.
func startHost(ctx context.Context, cfg *rest.Config, opts controller.Options) (<-chan error, error) {
	mgr, err := controller.NewManager(cfg, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
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
