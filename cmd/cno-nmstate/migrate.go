package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const migrateSummary = "print the oc patch that carries the standalone operator's NMState CR settings\n" +
	"into the Network (stdout), what has no equivalent and the handover steps (stderr)"

var (
	nmstateListGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NMStateList"}
	// The OLM operator's Deployment, as controller.OtherManager finds it:
	// its namespace goes into the uninstall step.
	operatorLabels = client.MatchingLabels{"app": "kubernetes-nmstate-operator"}
)

// migrateTimeout bounds the few reads: a cluster that does not answer in a
// minute gets an error, not a hung terminal.
const migrateTimeout = time.Minute

func migrateCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, in-cluster, or ~/.kube/config)")
	if err := parseFlags(fs, migrateSummary, args, stdout); err != nil {
		return err
	}
	cfg, err := loadKubeconfig(*kubeconfig)
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()

	cr, err := theNMState(ctx, c)
	if err != nil {
		return err
	}
	current, err := currentConfig(ctx, c)
	if err != nil {
		return err
	}
	m, err := nmstate.MigrationFrom(cr, current)
	if err != nil {
		return err
	}
	operatorNamespace, err := operatorNamespace(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, m.Command)
	printHandover(stderr, cr.GetName(), operatorNamespace, m)
	return nil
}

// theNMState is the one NMState CR. The operator honours only the oldest
// and deletes the others, so several mean it is not running: which one to
// carry over is the user's call.
func theNMState(ctx context.Context, c client.Reader) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(nmstateListGVK)
	switch err := c.List(ctx, list); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nil, fmt.Errorf("no NMState CR: the nmstate.io NMState CRD is not installed, so there are no settings to carry over")
	case err != nil:
		return nil, fmt.Errorf("listing NMState CRs: %w", err)
	}
	switch n := len(list.Items); n {
	case 0:
		return nil, fmt.Errorf("no NMState CR: the standalone operator has no settings to carry over " +
			"(uninstall it and set spec.kubernetesNMState yourself, see docs/user-guide.md)")
	case 1:
		return &list.Items[0], nil
	default:
		slices.SortStableFunc(list.Items, func(a, b unstructured.Unstructured) int {
			return a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time)
		})
		names := make([]string, n)
		for i := range list.Items {
			names[i] = list.Items[i].GetName()
		}
		return nil, fmt.Errorf("%d NMState CRs (%s): the standalone operator honours only the oldest, %s, and deletes the others while it runs; "+
			"delete the ones whose settings you do not want, then run this again", n, strings.Join(names, ", "), names[0])
	}
}

// currentConfig is what the Network holds now, so that the patch clears
// what the CR does not set and never lowers spec.logLevel.
func currentConfig(ctx context.Context, c client.Reader) (nmstate.Config, error) {
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(controller.NetworkGVK)
	switch err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, network); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nmstate.Config{}, nil
	case err != nil:
		return nmstate.Config{}, fmt.Errorf("reading network.operator/cluster: %w", err)
	}
	cfg, err := nmstate.ConfigFromNetwork(network)
	if err != nil {
		return nmstate.Config{}, fmt.Errorf("network.operator/cluster: fix it first (oc edit network.operator cluster): %w", err)
	}
	return cfg, nil
}

// operatorNamespace is where the OLM operator runs, for its uninstall
// step; OLM's default when its Deployment is not found.
func operatorNamespace(ctx context.Context, c client.Reader) (string, error) {
	deployments := &metav1.PartialObjectMetadataList{}
	deployments.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DeploymentList"})
	if err := c.List(ctx, deployments, operatorLabels, client.Limit(1)); err != nil {
		return "", fmt.Errorf("looking for the standalone kubernetes-nmstate operator: %w", err)
	}
	if len(deployments.Items) == 0 {
		return nmstate.Namespace, nil
	}
	return deployments.Items[0].GetNamespace(), nil
}

// printHandover follows docs/user-guide.md, "Moving from the standalone
// operator", with the command in its place.
func printHandover(w io.Writer, name, operatorNamespace string, m nmstate.Migration) {
	fmt.Fprintf(w, "The command on stdout carries the settings of NMState CR %s into the Network operator config\n"+
		"(spec.kubernetesNMState, with mode Enabled). The Cluster Network Operator uses them once the\n"+
		"standalone operator is gone; until then it deploys nothing.\n", name)
	if len(m.Dropped) > 0 {
		fmt.Fprint(w, "\nNot carried over: no equivalent in the Network operator config\n")
		for _, d := range m.Dropped {
			fmt.Fprintf(w, "  - %s %s: %s\n", d.Field, d.Value, d.Reason)
		}
	}
	fmt.Fprintf(w, `
To hand over to the Cluster Network Operator:
  1. Check that the policies are healthy, so that you can tell afterwards that nothing changed:
       oc get nncp
  2. Carry the settings over:
       %s
  3. Delete the NMState resource (the operator's handler and webhook go; the CRDs and policies stay):
       oc delete nmstates --all
  4. Uninstall the operator, in the console (Operators, Installed Operators, Kubernetes NMState
     Operator, Uninstall Operator) or with:
       oc -n %[2]s get subscription,clusterserviceversion
       oc -n %[2]s delete subscription <subscription-name>
       oc -n %[2]s delete clusterserviceversion <csv-name>
  5. On its next reconcile the Cluster Network Operator deploys its own handler. Check with:
       oc get network.operator cluster -o jsonpath='{.status.conditions[?(@.type=="KubernetesNMStateAvailable")].message}'
       oc get nncp
Between steps 3 and 5 no handler runs: the nodes keep their configuration, but avoid rebooting them.
`, m.Command, operatorNamespace)
}
