package main

import (
	"flag"
	"fmt"
	"io"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func runCmd(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster to run against (default: in-cluster or $KUBECONFIG)")
	gate := fs.Bool("default-on-gate", true, "feature gate KubernetesNMStateByDefault: when false, an omitted mode is off everywhere")
	manifests := fs.String("manifests", "", "bindata root to render from (default: the manifests built into this binary)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(stderr)))

	var cfg, err = ctrl.GetConfig()
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	}
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	dir, cleanup, err := manifestDir(*manifests)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(stderr, "running the kubernetes-nmstate host against %s (images from $%s)\n", cfg.Host, nmstate.EnvHandlerImage)
	done, err := startHost(ctrl.SetupSignalHandler(), cfg, controller.Options{ManifestDir: dir, DefaultOnGate: *gate})
	if err != nil {
		return err
	}
	return <-done
}
