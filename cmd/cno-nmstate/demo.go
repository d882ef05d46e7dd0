package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/clusterstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/prune"
)

// demoImage is what image-references names; the simulated nodes pull no
// image: upstream's binary, built by `make tools`, runs in its place.
const demoImage = "quay.io/openshift/origin-kubernetes-nmstate-handler:latest"

const demoSummary = "start an embedded control plane with simulated nodes, a sample\n" +
	"bare-metal cluster and the host, run upstream's handler and\n" +
	"webhook, and show the decision, rollout, policy and conditions"

func demoCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo")
	keep := fs.Bool("keep", false, "keep the control plane and the host running after the demo, until interrupted")
	kubeconfigOut := fs.String("kubeconfig-out", "_output/demo.kubeconfig", "where to write the demo cluster's kubeconfig")
	assets := fs.String("assets", os.Getenv("KUBEBUILDER_ASSETS"), "`directory` with the binaries make tools builds (default $KUBEBUILDER_ASSETS)")
	networkCRD := fs.String("network-crd", "manifests/0000_70_network_01_networks-TechPreviewNoUpgrade.crd.yaml", "the Network.operator CRD with spec.kubernetesNMState (behind the KubernetesNMState feature gate: a TechPreviewNoUpgrade cluster)")
	if err := parseFlags(fs, demoSummary, args, stdout); err != nil {
		return err
	}
	// The demo prints what matters itself; the host's errors, which a
	// condition only summarizes, go to stderr as `run` logs them.
	setHostLogger(stderr, zap.Level(zapcore.ErrorLevel))

	nodes := devcluster.BareMetalNodes()
	fmt.Fprintf(stdout, "== starting an embedded control plane: kube-apiserver, etcd, kube-controller-manager, kube-scheduler, and kwok playing the kubelets of %d nodes\n", len(nodes))
	dc, err := devcluster.Start(devcluster.Options{AssetsDir: *assets, NetworkCRD: *networkCRD, Nodes: nodes})
	if err != nil {
		return err
	}
	defer dc.Stop()
	if err := os.MkdirAll(filepath.Dir(*kubeconfigOut), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*kubeconfigOut, dc.Kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return err
	}
	c, err := client.New(dc.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()

	fmt.Fprintln(stdout, "== a sample bare-metal cluster: Infrastructure BareMetal/HighlyAvailable, feature set TechPreviewNoUpgrade (its Network CRD has spec.kubernetesNMState), Network.operator without it")
	if err := printNodes(ctx, c, stdout); err != nil {
		return err
	}
	if err := devcluster.CreateInfrastructure(ctx, c, configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode); err != nil {
		return err
	}
	if err := devcluster.CreateNetwork(ctx, c, nil); err != nil {
		return err
	}
	dir, cleanup, err := manifestDir("")
	if err != nil {
		return err
	}
	defer cleanup()
	image := os.Getenv(nmstate.EnvHandlerImage)
	if image == "" {
		image = demoImage
	}
	// The demo's host holds the Lease `cno-nmstate run` hosts contend for,
	// in CNO's namespace as on OpenShift, so that a `run` started against
	// the kept demo waits instead of fighting it.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}); err != nil {
		return fmt.Errorf("creating CNO's namespace for the leader Lease: %w", err)
	}
	opts := controller.Options{ManifestDir: dir, DefaultOnGate: true, Images: nmstate.Images{Handler: image, ReleaseVersion: "demo"}}
	done, err := startHost(ctx, dc.Config, leaderElection(leaseNamespace, leaseName), opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "== the plugin host is running under Lease %s/%s (a `cno-nmstate run` against this cluster waits for it)\n", leaseNamespace, leaseName)
	if err := printDecision(ctx, c, dc.Config, opts, stdout); err != nil {
		return err
	}

	// Available turns True once the controllers report a handler pod ready,
	// Progressing False once they report every pod ready: the rollout shown
	// below is then complete, not caught half way.
	if err := waitFor(ctx, func() (bool, error) {
		conds, err := devcluster.Conditions(ctx, c)
		return conds[nmstate.ConditionAvailable].Status == operv1.ConditionTrue &&
			conds[nmstate.ConditionProgressing].Reason == nmstate.ReasonAsExpected, err
	}); err != nil {
		return fmt.Errorf("waiting for kubernetes-nmstate to become available: %w", err)
	}
	before, err := ownedObjects(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n== created %d objects:\n", len(before))
	for _, o := range before {
		fmt.Fprintln(stdout, "  "+o)
	}
	fmt.Fprintln(stdout, "\n== rolled out, as the DaemonSet and Deployment controllers report it:")
	if err := printRollout(ctx, c, stdout); err != nil {
		return err
	}
	if err := printConditions(ctx, c, stdout); err != nil {
		return err
	}

	fmt.Fprintln(stdout, "\n== upstream's kubernetes-nmstate binary runs from the rendered pods as the webhook and as worker-0's handler")
	fmt.Fprintln(stdout, "   (stood in for: nmstatectl, the node's DNS server and OpenShift's service CA; see internal/devcluster/operands.go)")
	ops, err := devcluster.StartOperands(dc.Config, c, *assets, dc.Dir)
	if err != nil {
		return err
	}
	defer ops.Close()
	procs, err := runOperands(ctx, c, ops)
	for _, p := range procs {
		defer p.Stop()
	}
	if err != nil {
		return err
	}
	for _, p := range procs {
		fmt.Fprintf(stdout, "  running: pod %s (its output: %s)\n", p.Name, p.LogPath)
	}
	if err := printNodeNetworkState(ctx, c, stdout, "worker-0"); err != nil {
		return err
	}

	fmt.Fprintln(stdout, "\n== a user creates a NodeNetworkConfigurationPolicy for worker-0; the webhook stamps it, the handler enacts it")
	if err := c.Create(ctx, demoPolicy()); err != nil {
		return fmt.Errorf("creating the sample policy: %w", err)
	}
	if err := printPolicy(ctx, c, stdout, "demo-dummy0"); err != nil {
		return err
	}

	fmt.Fprintln(stdout, "\n== then opts out: spec.kubernetesNMState.mode=Disabled")
	if err := devcluster.PatchNetwork(ctx, c, `{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		present, err := exists(ctx, c, &appsv1.DaemonSet{}, nmstate.HandlerDaemonSet)
		return !present, err
	}); err != nil {
		return fmt.Errorf("waiting for the handler to be removed: %w", err)
	}
	if err := waitFor(ctx, func() (bool, error) {
		conds, err := devcluster.Conditions(ctx, c)
		return conds[nmstate.ConditionAvailable].Reason == nmstate.ReasonUserDisabled &&
			conds[nmstate.ConditionProgressing].Reason == nmstate.ReasonAsExpected, err
	}); err != nil {
		return err
	}
	after, err := ownedObjects(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "removed:")
	for _, o := range difference(before, after) {
		fmt.Fprintln(stdout, "  "+o)
	}
	fmt.Fprintln(stdout, "kept:")
	for _, o := range after {
		fmt.Fprintln(stdout, "  "+o)
	}
	fmt.Fprintln(stdout, "  NodeNetworkConfigurationPolicy demo-dummy0 (users' policies are never removed)")
	if err := printConditions(ctx, c, stdout); err != nil {
		return err
	}

	if !*keep {
		cancel()
		return <-done
	}
	kubectl := filepath.Join(*assets, "kubectl")
	fmt.Fprintf(stdout, `
== still running (--keep); press Ctrl-C to stop. Try:
  export KUBECONFIG=%s
  %s edit network.operator cluster        # set spec.kubernetesNMState.mode: Enabled
  %s patch network.operator cluster --type merge -p '{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}'
  %s get network.operator cluster -o jsonpath='{range .status.conditions[*]}{.type}{"\t"}{.status}{"\t"}{.reason}{"\n"}{end}'
  %s get nncp,nnce,nns
`, *kubeconfigOut, kubectl, kubectl, kubectl, kubectl)
	<-ctx.Done()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func demoPolicy() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
		"metadata": map[string]any{"name": "demo-dummy0"},
		"spec": map[string]any{
			"nodeSelector": map[string]any{"kubernetes.io/hostname": "worker-0"},
			"desiredState": map[string]any{"interfaces": []any{map[string]any{
				"name": "dummy0", "type": "dummy", "state": "up",
			}}},
		},
	}}
}

func exists(ctx context.Context, c client.Client, obj client.Object, name string) (bool, error) {
	err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: name}, obj)
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	return err == nil, nil
}

func waitFor(ctx context.Context, cond func() (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return cond() })
}

// ownedObjects lists what carries the plugin's label, as "Kind namespace/name".
func ownedObjects(ctx context.Context, c client.Client) ([]string, error) {
	owned, err := prune.Owned(ctx, c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, obj := range owned {
		out = append(out, obj.Kind+" "+klog.KObj(&obj).String())
	}
	sort.Strings(out)
	return out, nil
}

func difference(before, after []string) []string {
	kept := map[string]bool{}
	for _, a := range after {
		kept[a] = true
	}
	var out []string
	for _, b := range before {
		if !kept[b] {
			out = append(out, b)
		}
	}
	return out
}

// printConditions prints the plugin's conditions as
// `oc get network.operator cluster -o yaml` shows them.
func printConditions(ctx context.Context, c client.Client, w io.Writer) error {
	conds, err := devcluster.Conditions(ctx, c)
	if err != nil {
		return fmt.Errorf("reading the conditions: %w", err)
	}
	var ours []operv1.OperatorCondition
	for _, t := range []string{nmstate.ConditionAvailable, nmstate.ConditionProgressing, nmstate.ConditionDegraded} {
		ours = append(ours, conds[t])
	}
	data, err := yaml.Marshal(map[string]any{"status": map[string]any{"conditions": ours}})
	if err != nil {
		return fmt.Errorf("encoding the conditions: %w", err)
	}
	fmt.Fprintln(w, "$ oc get network.operator cluster -o yaml   (the plugin's conditions)")
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		fmt.Fprintln(w, "  "+line)
	}
	return nil
}

// printDecision shows what the plugin decides from the cluster's objects,
// through the same reads and the same call the host makes.
func printDecision(ctx context.Context, c client.Client, cfg *rest.Config, opts controller.Options, w io.Writer) error {
	resources, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the client for the nmstate.io resources: %w", err)
	}
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(controller.NetworkGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, network); err != nil {
		return err
	}
	infra := &configv1.Infrastructure{}
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, infra); err != nil {
		return err
	}
	res := nmstate.Render(nmstate.Input{Network: network, Infrastructure: nmstate.InfrastructureOf(infra), State: clusterstate.Read(ctx, clusterstate.Readers{Workloads: c, Live: c, Resources: resources}),
		DefaultOnGate: opts.DefaultOnGate, Images: opts.Images, ManifestDir: opts.ManifestDir})
	if res.Err != nil {
		return res.Err
	}
	d := res.Decision
	fmt.Fprintf(w, "\n== decision: enabled=%v reason=%s\n  %s\n", d.Enabled, d.Reason, d.Message)
	return nil
}
