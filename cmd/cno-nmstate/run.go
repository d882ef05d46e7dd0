package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const runSummary = "run the plugin host against a cluster, as CNO would: one host at a time\n" +
	"writes, the holder of a Lease in CNO's namespace; the others wait for it"

// The Lease every `run` host contends for. CNO's namespace, where CNO holds
// its own lock (network-operator-lock) and whose service account the host's
// ClusterRole is bound to; a name of its own, so that a host never blocks
// CNO's controllers nor waits behind them.
const (
	leaseNamespace = "openshift-network-operator"
	leaseName      = "cno-nmstate-lock"
)

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster to run against (default: $KUBECONFIG, in-cluster, or ~/.kube/config)")
	handlerImage := fs.String("handler-image", os.Getenv(nmstate.EnvHandlerImage), "kubernetes-nmstate handler image, also used by the webhook (default $"+nmstate.EnvHandlerImage+")")
	release := fs.String("release-version", os.Getenv(nmstate.EnvReleaseVersion), "release version for release.openshift.io/version (default $"+nmstate.EnvReleaseVersion+")")
	gate := fs.Bool("default-on-gate", true, "feature gate KubernetesNMStateByDefault: when false, an omitted mode is off everywhere")
	manifests := fs.String("manifests", "", "bindata root to render from (default: the manifests built into this binary)")
	leaderElect := fs.Bool("leader-elect", true, "act only while holding the Lease below, so that of several hosts exactly one writes; false only where no other host can run")
	namespace := fs.String("leader-elect-resource-namespace", leaseNamespace, "namespace of the leader Lease")
	name := fs.String("leader-elect-resource-name", leaseName, "name of the leader Lease")
	if err := parseFlags(fs, runSummary, args, stdout); err != nil {
		return err
	}
	// Without it every reconcile that enables kubernetes-nmstate would
	// report MissingImage: a host that cannot deploy is not started.
	if *handlerImage == "" {
		return usageErrorf("no handler image: pass -handler-image or set $%s", nmstate.EnvHandlerImage)
	}
	if *leaderElect {
		if errs := validation.IsDNS1123Label(*namespace); len(errs) > 0 {
			return usageErrorf("-leader-elect-resource-namespace %q is not a namespace name (%s); the default is %q", *namespace, strings.Join(errs, "; "), leaseNamespace)
		}
		if errs := validation.IsDNS1123Subdomain(*name); len(errs) > 0 {
			return usageErrorf("-leader-elect-resource-name %q is not a Lease name (%s); the default is %q", *name, strings.Join(errs, "; "), leaseName)
		}
	}
	setHostLogger(stderr)

	cfg, err := loadKubeconfig(*kubeconfig)
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	dir, cleanup, err := manifestDir(*manifests)
	if err != nil {
		return err
	}
	defer cleanup()
	mgrOpts := ctrl.Options{}
	if *leaderElect {
		mgrOpts = leaderElection(*namespace, *name)
		fmt.Fprintf(stderr, "running the kubernetes-nmstate host against %s with handler image %s, once it holds Lease %s/%s\n", cfg.Host, *handlerImage, *namespace, *name)
	} else {
		fmt.Fprintf(stderr, "running the kubernetes-nmstate host against %s with handler image %s, without leader election\n", cfg.Host, *handlerImage)
	}
	done, err := startHost(ctrl.SetupSignalHandler(), cfg, mgrOpts, controller.Options{ManifestDir: dir, DefaultOnGate: *gate,
		Images: nmstate.Images{Handler: *handlerImage, ReleaseVersion: *release}})
	if err != nil {
		return err
	}
	return <-done
}

// loadKubeconfig reads the file the flag names; only without one does it
// look further, so an explicit kubeconfig never logs that the in-cluster
// config is missing. Finding none, it says how to give one: client-go's own
// words name KUBERNETES_MASTER, which neither kubectl nor oc reads.
func loadKubeconfig(path string) (*rest.Config, error) {
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	cfg, err := ctrl.GetConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, errors.New("no kubeconfig found: pass -kubeconfig FILE or set $KUBECONFIG (run in a pod, it uses the pod's service account; ~/.kube/config is tried last)")
	}
	return cfg, err
}
