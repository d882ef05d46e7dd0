package devcluster

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

// controllers are the kube-controller-manager loops the operands rely on:
// workloads and their pods, garbage collection of owned objects, disruption
// budgets, endpoints for the webhook's Service, service accounts, namespace
// deletion, and pods left on a deleted node; and the aggregation of
// cluster-reader (clusterreader.go).
var controllers = []string{
	"daemonset-controller", "deployment-controller", "replicaset-controller",
	"garbage-collector-controller", "disruption-controller",
	"endpoints-controller", "endpointslice-controller",
	"serviceaccount-controller", "namespace-controller",
	// Removes the pods of a deleted node.
	"pod-garbage-collector-controller",
	"clusterrole-aggregation-controller",
}

// startProcess runs bin with args, its output in dir/name.log.
func startProcess(dir, name, bin string, args ...string) (*podproc.Process, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no %s at %s (build it with `make tools`): %w", name, bin, err)
	}
	return podproc.Run(name, exec.Command(bin, args...), filepath.Join(dir, name+".log"))
}

// startWorkloadControllers starts kube-controller-manager, kube-scheduler and
// kwok against the cluster with the admin kubeconfig in dir.
func startWorkloadControllers(assets, dir, kubeconfig string, nodes []Node) ([]*podproc.Process, error) {
	// A name no node can have keeps the list valid when it is empty.
	neverReady := []string{"-"}
	for _, n := range nodes {
		if n.PodsNeverReady {
			neverReady = append(neverReady, n.Name)
		}
	}
	list, err := json.Marshal(neverReady)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes whose pods never become ready: %w", err)
	}
	stages := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, bytes.ReplaceAll(kwokStages, []byte("PODS_NEVER_READY"), list), 0o600); err != nil {
		return nil, fmt.Errorf("writing kwok's stages: %w", err)
	}
	specs := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0",
			"--controllers=" + strings.Join(controllers, ","), "--concurrent-daemonset-syncs=5", "--concurrent-deployment-syncs=5",
			"--concurrent-gc-syncs=5", "-v=1"}},
		{"kube-scheduler", []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0", "-v=1"}},
		{"kwok", []string{"--kubeconfig=" + kubeconfig, "--config=" + stages,
			"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=" + kwokAnnotation + "=fake",
			"--cidr=" + podCIDR, "--node-ip=" + nodeIP, "--node-lease-duration-seconds=40"}},
	}
	var procs []*podproc.Process
	for _, s := range specs {
		p, err := startProcess(dir, s.name, filepath.Join(assets, s.name), s.args...)
		if err != nil {
			stopAll(procs)
			return nil, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

func stopAll(procs []*podproc.Process) error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		errs = append(errs, procs[i].Stop())
	}
	return errors.Join(errs...)
}

// trackControlPlane records the etcd and kube-apiserver processes envtest
// started, found among this process's children by their binaries: Stop
// makes sure they are gone, and podproc.Leftovers reports any that is not.
func (c *Cluster) trackControlPlane() {
	for _, part := range []struct{ name, path string }{
		{"etcd", c.env.ControlPlane.Etcd.Path},
		{"kube-apiserver", c.env.ControlPlane.GetAPIServer().Path},
	} {
		if part.path == "" {
			continue // not started
		}
		for _, pid := range podproc.Children(part.path) {
			if slices.ContainsFunc(c.controlPlane, func(t podproc.Tracked) bool { return t.Pid == pid }) {
				continue
			}
			if t, ok := podproc.Track(part.name+" of "+c.Dir, pid); ok {
				c.controlPlane = append(c.controlPlane, t)
			}
		}
	}
}

// killControlPlane kills what is left of the control plane's processes
// after envtest stopped them, and says which were left: one that outlived
// its stop would run on with no cluster directory.
func (c *Cluster) killControlPlane() error {
	var errs []error
	for _, t := range c.controlPlane {
		errs = append(errs, t.Kill())
	}
	return errors.Join(errs...)
}
