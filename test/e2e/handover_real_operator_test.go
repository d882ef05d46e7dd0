package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	operatorHandlerImage = "quay.io/nmstate/kubernetes-nmstate-handler:v0.86.0"
	nmstateCR            = `apiVersion: nmstate.io/v1
kind: NMState
metadata:
  name: nmstate
`
)

// TestHandoverFromRealOperator: upstream's standalone operator (cmd/operator
// v0.86.0, as a process with the templates its image carries) deploys its
// handler for an NMState CR while the host runs; the host steps aside and
// leaves the operator's same-named DaemonSet alone. Deleting the CR and
// stopping the operator (an OLM uninstall) hands over: the garbage collector
// removes the operator's objects and the host deploys its own again. A watch
// on handler DaemonSets in every namespace sees at most one at any moment,
// and the policy is the same object throughout.
func TestHandoverFromRealOperator(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), extraCRDs: []string{"testdata/crds/nmstate.io_nmstates.yaml"}})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitRolledOut(6)
	out, err := k.kubectlApply(realPolicy)
	require.NoError(t, err, out)
	policyUID := k.nncpObject("worker-0-dummy").GetUID()

	maxHandlers := k.recordHandlerDaemonSets()

	// The operator runs with the cluster admin's kubeconfig: it stands for
	// what OLM installs with its own RBAC, which is not what is under test.
	dir := t.TempDir()
	require.NoError(t, devcluster.LayOutOperatorImage(dir, "v0.86.0"))
	op := exec.Command(filepath.Join(assetsDir(t), devcluster.OperatorBinary))
	op.Dir = dir
	op.Env = []string{"KUBECONFIG=" + k.kubeconfig, "PATH=/usr/bin:/bin",
		"HANDLER_NAMESPACE=" + nmstate.Namespace, "OPERATOR_NAMESPACE=" + nmstate.Namespace, "HANDLER_PREFIX=",
		"RELATED_IMAGE_HANDLER_IMAGE=" + operatorHandlerImage, "HANDLER_IMAGE_PULL_POLICY=IfNotPresent",
		"MONITORING_NAMESPACE=openshift-monitoring", "KUBE_RBAC_PROXY_IMAGE=quay.io/openshift/origin-kube-rbac-proxy:latest"}
	logPath := filepath.Join(dir, "operator.log")
	log, err := os.Create(logPath)
	require.NoError(t, err)
	op.Stdout, op.Stderr = log, log
	op.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, op.Start())
	stopped := false
	stopOperator := func() {
		if !stopped {
			stopped = true
			_ = op.Process.Signal(syscall.SIGTERM)
			_ = op.Wait()
		}
	}
	t.Cleanup(func() {
		stopOperator()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- the operator's output:\n%s", b)
		}
	})

	out, err = k.kubectlApply(nmstateCR)
	require.NoError(t, err, out)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedByStandaloneOperator)
	var ds appsv1.DaemonSet
	require.True(t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Spec.Template.Spec.Containers[0].Image == operatorHandlerImage &&
			ds.Status.ObservedGeneration == ds.Generation && ds.Status.NumberReady == 6
	}), "the operator's handler never rolled out: %+v", ds.Status)
	assert.Equal(t, "NMState", ds.OwnerReferences[0].Kind, "the DaemonSet is the operator's")
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedByStandaloneOperator)
	require.True(t, k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet), "the host left the operator's DaemonSet alone")
	assert.Equal(t, operatorHandlerImage, ds.Spec.Template.Spec.Containers[0].Image)

	out, err = k.kubectl("delete", "nmstate", "nmstate", "--wait=true")
	require.NoError(t, err, out)
	stopOperator()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	require.True(t, waitUntil(func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Spec.Template.Spec.Containers[0].Image == handlerImage
	}), "the host's handler is back")
	k.waitRolledOut(6)

	assert.Equal(t, 1, maxHandlers(), "at most one handler DaemonSet at any moment")
	assert.Equal(t, policyUID, k.nncpObject("worker-0-dummy").GetUID(), "the policy survived the handover")
}

// recordHandlerDaemonSets watches DaemonSets labelled as kubernetes-nmstate
// handlers in every namespace until the test ends and returns the largest
// number that existed at once.
func (k *cluster) recordHandlerDaemonSets() func() int {
	k.t.Helper()
	list := &appsv1.DaemonSetList{}
	selector := client.MatchingLabels{"component": "kubernetes-nmstate-handler"}
	require.NoError(k.t, k.c.List(k.ctx(), list, selector))
	wc, err := client.NewWithWatch(k.cfg, client.Options{Scheme: k.c.Scheme()})
	require.NoError(k.t, err)
	w, err := wc.Watch(k.ctx(), &appsv1.DaemonSetList{}, selector, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	require.NoError(k.t, err)
	var mu sync.Mutex
	live := map[string]bool{}
	for _, d := range list.Items {
		live[d.Namespace+"/"+string(d.UID)] = true
	}
	most := len(live)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				d, isDS := ev.Object.(*appsv1.DaemonSet)
				if !isDS {
					continue
				}
				mu.Lock()
				if ev.Type == watch.Deleted {
					delete(live, d.Namespace+"/"+string(d.UID))
				} else {
					live[d.Namespace+"/"+string(d.UID)] = true
				}
				most = max(most, len(live))
				mu.Unlock()
			}
		}
	}()
	k.t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}
