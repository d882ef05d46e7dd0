package devcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kwokAnnotation marks the nodes kwok plays the kubelet of.
const kwokAnnotation = "kwok.x-k8s.io/node"

// Node is a simulated node.
type Node struct {
	Name   string
	Labels map[string]string
	Taints []corev1.Taint
	// PodsNeverReady: the node is Ready but no pod on it ever becomes ready,
	// as behind a kubelet that hangs or an image that cannot be pulled.
	PodsNeverReady bool
}

var masterTaint = corev1.Taint{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule}

func nodeLabels(name, os string, roles ...string) map[string]string {
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": os, "kubernetes.io/arch": "amd64"}
	for _, r := range roles {
		l["node-role.kubernetes.io/"+r] = ""
	}
	return l
}

// ControlPlaneNode is a master as OpenShift labels and taints it.
func ControlPlaneNode(name string) Node {
	return Node{Name: name, Labels: nodeLabels(name, "linux", "master", "control-plane"), Taints: []corev1.Taint{masterTaint}}
}

// LinuxWorker is a Linux worker.
func LinuxWorker(name string) Node {
	return Node{Name: name, Labels: nodeLabels(name, "linux", "worker")}
}

// WindowsWorker is a Windows worker (Windows Machine Config Operator's).
func WindowsWorker(name string) Node {
	return Node{Name: name, Labels: nodeLabels(name, "windows", "worker")}
}

// BareMetalNodes is the sample bare-metal cluster: three tainted
// control-plane nodes, three Linux workers and one Windows worker.
func BareMetalNodes() []Node {
	return []Node{
		ControlPlaneNode("master-0"), ControlPlaneNode("master-1"), ControlPlaneNode("master-2"),
		LinuxWorker("worker-0"), LinuxWorker("worker-1"), LinuxWorker("worker-2"),
		WindowsWorker("windows-0"),
	}
}

// SingleNode is a single-node OpenShift: one node that is master and worker,
// untainted, as the installer leaves it.
func SingleNode() []Node {
	return []Node{{Name: "sno-0", Labels: nodeLabels("sno-0", "linux", "master", "control-plane", "worker")}}
}

// CreateNodes creates the nodes; kwok makes them Ready.
func CreateNodes(ctx context.Context, c client.Client, nodes []Node) error {
	for _, n := range nodes {
		obj := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, Annotations: map[string]string{kwokAnnotation: "fake"}},
			Spec:       corev1.NodeSpec{Taints: n.Taints},
		}
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}
