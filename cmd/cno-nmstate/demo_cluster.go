package main

// What the demo shows of the simulated cluster: its nodes, where the
// operands run and why not elsewhere, and what upstream's handler reports.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func printNodes(ctx context.Context, c client.Client, w io.Writer) error {
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	fmt.Fprintln(w, "  nodes:")
	for _, n := range nodes.Items {
		var roles []string
		for l := range n.Labels {
			if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok {
				roles = append(roles, r)
			}
		}
		sort.Strings(roles)
		var taints []string
		for _, t := range n.Spec.Taints {
			taints = append(taints, t.Key+":"+string(t.Effect))
		}
		fmt.Fprintf(w, "    %-10s %-8s %-28s %s\n", n.Name, n.Labels[corev1.LabelOSStable], strings.Join(roles, ","), strings.Join(taints, ","))
	}
	return nil
}

// printRollout says which nodes run a handler and a webhook pod, and for each
// node without a handler, why the DaemonSet controller placed none there.
func printRollout(ctx context.Context, c client.Client, w io.Writer) error {
	ds := &appsv1.DaemonSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); err != nil {
		return fmt.Errorf("reading the handler DaemonSet: %w", err)
	}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.WebhookDeployment}, dep); err != nil {
		return fmt.Errorf("reading the webhook Deployment: %w", err)
	}
	fmt.Fprintf(w, "  handler DaemonSet: %d of %d scheduled pods ready; webhook Deployment: %d of %d replicas available\n",
		ds.Status.NumberReady, ds.Status.DesiredNumberScheduled, dep.Status.AvailableReplicas, *dep.Spec.Replicas)
	handlers, err := podsByNode(ctx, c, nmstate.HandlerDaemonSet)
	if err != nil {
		return err
	}
	webhooks, err := podsByNode(ctx, c, nmstate.WebhookDeployment)
	if err != nil {
		return err
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		line := "no handler: " + whyNoPod(&n, &ds.Spec.Template.Spec)
		if p, ok := handlers[n.Name]; ok {
			line = "handler " + p
		}
		if p, ok := webhooks[n.Name]; ok {
			line += ", webhook " + p
		}
		fmt.Fprintf(w, "    %-10s %s\n", n.Name, line)
	}
	return nil
}

func podsByNode(ctx context.Context, c client.Client, workload string) (map[string]string, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"name": workload}); err != nil {
		return nil, fmt.Errorf("listing %s pods: %w", workload, err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Spec.NodeName] = fmt.Sprintf("%s (%s)", p.Name, p.Status.Phase)
	}
	return out, nil
}

// whyNoPod names the first of the pod spec's node selector or the node's
// taints that keeps the pod off the node.
func whyNoPod(n *corev1.Node, spec *corev1.PodSpec) string {
	for k, v := range spec.NodeSelector {
		if n.Labels[k] != v {
			return fmt.Sprintf("the handler's nodeSelector %s=%s does not match the node's %q", k, v, n.Labels[k])
		}
	}
	for _, t := range n.Spec.Taints {
		tolerated := false
		for _, tol := range spec.Tolerations {
			tolerated = tolerated || tol.ToleratesTaint(klog.Background(), &t, false)
		}
		if !tolerated && t.Effect != corev1.TaintEffectPreferNoSchedule {
			return fmt.Sprintf("the node's taint %s:%s is not tolerated", t.Key, t.Effect)
		}
	}
	return "not scheduled yet"
}

// runOperands starts upstream's binary for the first webhook pod and for
// worker-0's handler pod.
func runOperands(ctx context.Context, c client.Client, ops *devcluster.Operands) ([]*podproc.Process, error) {
	var procs []*podproc.Process
	for _, o := range []struct{ workload, node string }{{nmstate.WebhookDeployment, ""}, {nmstate.HandlerDaemonSet, "worker-0"}} {
		var p *podproc.Process
		err := waitFor(ctx, func() (bool, error) {
			pod, err := devcluster.BoundPod(ctx, c, o.workload, o.node)
			if err != nil || pod == nil {
				return false, err
			}
			// The webhook's serving secret may not be signed yet.
			p, err = ops.Runner.Start(ctx, pod, o.workload)
			return err == nil, nil
		})
		if err != nil {
			return procs, fmt.Errorf("starting upstream's %s: %w", o.workload, err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// printNodeNetworkState shows what the handler reported for node.
func printNodeNetworkState(ctx context.Context, c client.Client, w io.Writer, node string) error {
	nns := &unstructured.Unstructured{}
	nns.SetAPIVersion("nmstate.io/v1beta1")
	nns.SetKind("NodeNetworkState")
	// The handler creates the object first and reports the state in a
	// second write.
	var ifaces []any
	if err := waitFor(ctx, func() (bool, error) {
		if c.Get(ctx, client.ObjectKey{Name: node}, nns) != nil {
			return false, nil
		}
		ifaces, _, _ = unstructured.NestedSlice(nns.Object, "status", "currentState", "interfaces")
		return len(ifaces) > 0, nil
	}); err != nil {
		return fmt.Errorf("waiting for the handler to report NodeNetworkState %s: %w", node, err)
	}
	fmt.Fprintf(w, "NodeNetworkState %s, as the handler reported it:\n", node)
	for _, i := range ifaces {
		m, _ := i.(map[string]any)
		fmt.Fprintf(w, "  interface %v type %v state %v\n", m["name"], m["type"], m["state"])
	}
	updated, _, _ := unstructured.NestedString(nns.Object, "status", "lastSuccessfulUpdateTime")
	fmt.Fprintf(w, "  lastSuccessfulUpdateTime %s\n", updated)
	return nil
}

// printPolicy waits for the handler to settle the policy and shows its
// conditions and its enactment's, as the handler wrote them.
func printPolicy(ctx context.Context, c client.Client, w io.Writer, name string) error {
	policy := &unstructured.Unstructured{}
	policy.SetAPIVersion("nmstate.io/v1")
	policy.SetKind("NodeNetworkConfigurationPolicy")
	if err := waitFor(ctx, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, policy); err != nil {
			return false, err
		}
		return conditionReason(policy, "Available") == "SuccessfullyConfigured", nil
	}); err != nil {
		return fmt.Errorf("waiting for the handler to configure policy %s: %w", name, err)
	}
	stamp := policy.GetAnnotations()["nmstate.io/webhook-mutating-timestamp"]
	fmt.Fprintf(w, "policy %s (webhook timestamp %q), conditions:\n", name, stamp)
	printObjectConditions(w, policy)
	enactment := &unstructured.Unstructured{}
	enactment.SetAPIVersion("nmstate.io/v1beta1")
	enactment.SetKind("NodeNetworkConfigurationEnactment")
	if err := c.Get(ctx, client.ObjectKey{Name: "worker-0." + name}, enactment); err != nil {
		return fmt.Errorf("reading the enactment: %w", err)
	}
	fmt.Fprintf(w, "enactment %s, conditions:\n", enactment.GetName())
	printObjectConditions(w, enactment)
	return nil
}

func conditionReason(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ && m["status"] == "True" {
			r, _ := m["reason"].(string)
			return r
		}
	}
	return ""
}

func printObjectConditions(w io.Writer, obj *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		fmt.Fprintf(w, "  %-12v %-6v %-24v %v\n", m["type"], m["status"], m["reason"], m["message"])
	}
}
