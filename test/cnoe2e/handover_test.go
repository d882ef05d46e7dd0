//go:build cnoe2e

package cnoe2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// nmstateCRD is the standalone operator's NMState CRD (v0.86.0), which the
// host's handover tests install as well.
const nmstateCRD = "../e2e/testdata/crds/nmstate.io_nmstates.yaml"

var nmstateCRGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NMState"}

// handlerWatch lists the handler DaemonSets of every namespace every 100 ms
// (they carry the component label, ours and the operator's) and records the
// most that existed at once and the longest stretch with none.
type handlerWatch struct {
	mu          sync.Mutex
	most        int
	noneSince   time.Time
	longestNone time.Duration
	poller      *poller
}

func (e *env) watchHandlers() *handlerWatch {
	w := &handlerWatch{}
	w.poller = poll(tick, func() bool {
		list := &appsv1.DaemonSetList{}
		if err := e.c.List(e.ctx(), list, client.MatchingLabels{"component": "kubernetes-nmstate-handler"}); err != nil {
			return false
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.most = max(w.most, len(list.Items))
		switch {
		case len(list.Items) == 0 && w.noneSince.IsZero():
			w.noneSince = time.Now()
		case len(list.Items) > 0 && !w.noneSince.IsZero():
			w.longestNone = max(w.longestNone, time.Since(w.noneSince))
			w.noneSince = time.Time{}
		}
		return false
	})
	return w
}

func (w *handlerWatch) stop() (most int, longestNone time.Duration) {
	w.poller.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.noneSince.IsZero() {
		w.longestNone = max(w.longestNone, time.Since(w.noneSince))
	}
	return w.most, w.longestNone
}

// controllerKind is the kind of obj's controller reference, "" for none.
func controllerKind(obj metav1.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return ref.Kind
	}
	return ""
}

// TestHandoverWithStandaloneOperator (scenario g): upstream's real operator
// (cmd/operator v0.86.0) is started in openshift-nmstate, the namespace of
// OpenShift's OLM package and CNO's, beside the Deployment OLM would create
// for it, and an NMState CR created. The
// operator sets its own controller reference on what it deploys and cannot
// while CNO's (to network.operator/cluster) is there, so it retries until
// CNO steps aside and its own pruning deletes its objects; then the
// operator's handler runs. Deleting the CR and stopping the operator (an OLM
// uninstall) gives the handler back to CNO. Throughout at most one handler
// DaemonSet exists, the policy is the user's, and every handler DaemonSet
// has exactly one controller: CNO's Network or the NMState CR.
func TestHandoverWithStandaloneOperator(t *testing.T) {
	e, _, policy := deployedOnBareMetal(t, options{extraCRDs: []string{nmstateCRD}})
	ds := &appsv1.DaemonSet{}
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.Equal(t, "Network", controllerKind(ds), "CNO's handler is controlled by the operator config")
	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, e.dc.Kubeconfig, 0o600))

	handlers := e.watchHandlers()
	// What OLM creates; CNO defers to the CR only while it is available.
	operator := devcluster.OperatorDeployment(nmstate.Namespace, 1)
	require.NoError(t, e.c.Create(e.ctx(), operator))
	require.True(t, waitFor(2*time.Minute, func() bool {
		return e.exists(operator, nmstate.Namespace, operator.Name) && operator.Status.AvailableReplicas > 0
	}), "the operator's Deployment never became available: %+v", operator.Status)
	op, err := devcluster.StartOperator(assetsDir(t), t.TempDir(), kubeconfig, nmstate.Namespace)
	require.NoError(t, err)
	stopOp := sync.OnceFunc(func() {
		assert.NoError(t, op.Stop())
		assert.NoError(t, client.IgnoreNotFound(e.c.Delete(e.ctx(), operator)), "deleting the operator's Deployment")
	})
	t.Cleanup(func() {
		stopOp()
		if t.Failed() {
			t.Logf("--- the operator's output:\n%s", tail(op.Log(), 60))
		}
	})
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(nmstateCRGVK)
	cr.SetName("nmstate")
	began := time.Now()
	require.NoError(t, e.c.Create(e.ctx(), cr))

	avail := e.waitCondition(5*time.Minute, nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	figure(t, "NMState CR created to CNO stepping aside: %s", time.Since(began).Round(100*time.Millisecond))
	t.Logf("%s: %s", nmstate.ConditionAvailable, avail.Message)
	require.True(t, waitFor(8*time.Minute, func() bool {
		return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && controllerKind(ds) == "NMState" &&
			ds.Spec.Template.Spec.Containers[0].Image == devcluster.OperatorHandlerImage && ds.Status.NumberReady == 6
	}), "the operator's handler never rolled out; DaemonSet owners %v, status %+v", ds.OwnerReferences, ds.Status)
	figure(t, "NMState CR created to the operator's handler ready: %s", time.Since(began).Round(100*time.Millisecond))
	assert.Len(t, ds.OwnerReferences, 1, "the operator's handler has one owner, the CR: %v", ds.OwnerReferences)

	// OLM's uninstall: the CR (its objects go with it by owner reference),
	// then the operator and its Deployment.
	require.NoError(t, e.c.Delete(e.ctx(), cr, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	last := cr.DeepCopy()
	require.True(t, waitFor(4*time.Minute, func() bool { return !e.exists(last, "", "nmstate") }),
		"the NMState CR was not deleted; last seen with finalizers %v, deletion %v", last.GetFinalizers(), last.GetDeletionTimestamp())
	stopOp()
	began = time.Now()
	e.waitCondition(5*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	require.True(t, waitFor(3*time.Minute, func() bool {
		return e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && controllerKind(ds) == "Network" && dsAvailable(ds)
	}), "CNO's own handler never came back; DaemonSet owners %v", ds.OwnerReferences)
	figure(t, "operator uninstalled to CNO's handler available: %s", time.Since(began).Round(100*time.Millisecond))
	assert.Len(t, ds.OwnerReferences, 1, "CNO's handler has one owner, the operator config: %v", ds.OwnerReferences)

	most, none := handlers.stop()
	figure(t, "longest time with no handler DaemonSet: %s", none.Round(100*time.Millisecond))
	assert.Equal(t, 1, most, "at most one handler DaemonSet at any moment")
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(policyGVK)
	require.True(t, e.exists(p, "", "keep-me"))
	assert.Equal(t, policy, p.GetUID(), "the user's policy survived both handovers")
}

// TestIdleOperator (scenario n): what looks like the standalone operator
// but runs nothing does not make CNO step aside. An NMState CR and the
// operator's Deployment scaled to 0: CNO's handler and everything it
// deployed stay, and KubernetesNMStateDegraded names both, within a minute
// (CNO watches them; its resync is 3 minutes). Scaled to one available
// replica (kwok runs its pod), it is a live manager: CNO steps aside within
// a minute too. Both removed, CNO takes over again. Before, the CR alone
// made CNO step aside and delete its running handler.
func TestIdleOperator(t *testing.T) {
	e, deployed, _ := deployedOnBareMetal(t, options{extraCRDs: []string{nmstateCRD}})
	operator := devcluster.OperatorDeployment(nmstate.Namespace, 0)
	require.NoError(t, e.c.Create(e.ctx(), operator))
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(nmstateCRGVK)
	cr.SetName("nmstate")
	began := time.Now()
	require.NoError(t, e.c.Create(e.ctx(), cr))
	var degraded operv1.OperatorCondition
	require.True(t, waitFor(time.Minute, func() bool {
		degraded = e.operatorConditions()[nmstate.ConditionDegraded]
		return degraded.Status == operv1.ConditionTrue && degraded.Reason == nmstate.ReasonOtherManagerNotRunning &&
			strings.Contains(degraded.Message, "operator Deployment openshift-nmstate/nmstate-operator is scaled to 0 and NMState CR nmstate has no running operator")
	}), "Degraded never named the idle operator and its CR within a minute: %+v", degraded)
	figure(t, "NMState CR created beside an operator scaled to 0 to Degraded: %s", time.Since(began).Round(100*time.Millisecond))
	e.reconciled()
	assert.Equal(t, nmstate.ReasonPlatformDefault, e.operatorConditions()[nmstate.ConditionAvailable].Reason)
	assert.Empty(t, e.missing(deployed), "CNO removed objects for an operator that runs nothing")

	began = time.Now()
	require.NoError(t, e.c.Patch(e.ctx(), operator, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))))
	e.waitCondition(time.Minute, nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	figure(t, "operator scaled up to CNO stepping aside: %s", time.Since(began).Round(100*time.Millisecond))

	require.NoError(t, e.c.Delete(e.ctx(), cr))
	require.NoError(t, e.c.Delete(e.ctx(), operator))
	e.waitCondition(time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	e.waitCondition(time.Minute, nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
}
