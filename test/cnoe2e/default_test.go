//go:build cnoe2e

package cnoe2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// rolloutWatch records, polling every 100 ms, when the handler DaemonSet
// first reported every handler updated and available, and when the
// operator config first said KubernetesNMStateAvailable=True after that,
// each with how much of CNO's log was written by then.
type rolloutWatch struct {
	mu                  sync.Mutex
	dsAvailable, condAt time.Time
	dsLog, condLog      int
	poller              *poller
}

func (e *env) watchRollout() *rolloutWatch {
	w := &rolloutWatch{}
	w.poller = poll(tick, func() bool {
		ds := &appsv1.DaemonSet{}
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := e.c.Get(e.ctx(), client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds); err == nil &&
			w.dsAvailable.IsZero() && dsAvailable(ds) {
			w.dsAvailable = time.Now()
			w.dsLog = len(e.cno.Log())
		}
		if w.dsAvailable.IsZero() {
			return false
		}
		conds, err := devcluster.Conditions(e.ctx(), e.c)
		if err != nil || conds[nmstate.ConditionAvailable].Status != operv1.ConditionTrue {
			return false
		}
		w.condAt = time.Now()
		w.condLog = len(e.cno.Log())
		return true
	})
	return w
}

func (w *rolloutWatch) wait(d time.Duration) *rolloutWatch {
	select {
	case <-w.poller.done:
	case <-time.After(d):
	}
	w.poller.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w
}

// completedReconciles counts the reconciles of CNO's that both began and
// ended within a stretch of its log.
func completedReconciles(log string) int {
	n := 0
	for {
		began := strings.Index(log, reconcileBegins)
		if began < 0 {
			return n
		}
		log = log[began+len(reconcileBegins):]
		ended := strings.Index(log, reconcileEnds)
		if ended < 0 {
			return n
		}
		n++
		log = log[ended+len(reconcileEnds):]
	}
}

// TestDefaultOnBareMetal (scenario a): on BareMetal with
// spec.kubernetesNMState absent and the default gate on, the patched CNO
// renders kubernetes-nmstate; the real DaemonSet and Deployment controllers
// roll the handler out on the six Linux nodes and the webhook out, upstream's
// binaries run from the pods they created, and the KubernetesNMState*
// conditions appear on network.operator and on clusteroperator/network.
// The latency from the DaemonSet's status change to the condition is
// logged as a figure; what is asserted is its order: no reconcile of CNO's
// that began after the DaemonSet was available ended without the condition
// saying so, so the condition does not wait for a later resync.
func TestDefaultOnBareMetal(t *testing.T) {
	began := time.Now()
	e := start(t, options{platform: configv1.BareMetalPlatformType})
	rollout := e.watchRollout()
	ds, dep := e.waitRolledOut(3 * time.Minute)
	figure(t, "CNO start to the handler DaemonSet fully available: %s", time.Since(began).Round(100*time.Millisecond))
	assert.EqualValues(t, 6, ds.Status.DesiredNumberScheduled, "a handler on every Linux node, none on windows-0")
	t.Logf("handler DaemonSet %+v; webhook Deployment %+v", ds.Status, dep.Status)

	// Upstream's real handler and webhook, from the pods the controllers made.
	handler := e.runOperand(nmstate.HandlerDaemonSet, "nmstate-handler", "worker-0")
	webhook := e.runOperand(nmstate.WebhookDeployment, "nmstate-webhook", "")
	nns := &unstructured.Unstructured{}
	nns.SetGroupVersionKind(nodeNetworkStateGVK)
	require.True(t, waitFor(3*time.Minute, func() bool { return e.exists(nns, "", "worker-0") }),
		"upstream's handler reported no NodeNetworkState for worker-0; its log:\n%s", tail(handler.Log(), 40))
	exited, err := webhook.Exited()
	require.False(t, exited, "the webhook exited: %v\n%s", err, tail(webhook.Log(), 40))

	w := rollout.wait(4 * time.Minute)
	require.False(t, w.dsAvailable.IsZero(), "the DaemonSet was never seen fully available")
	require.False(t, w.condAt.IsZero(), "%s never became True; conditions: %s", nmstate.ConditionAvailable, e.describeConditions())
	between := e.cno.Log()[w.dsLog:w.condLog]
	figure(t, "handler DaemonSet fully available to %s=True on network.operator: %s, %d whole reconciles of CNO's between",
		nmstate.ConditionAvailable, w.condAt.Sub(w.dsAvailable).Round(100*time.Millisecond), completedReconciles(between))
	// A reconcile writes its status as it ends and the watch samples every
	// 100 ms, so the one that wrote True may have ended before it was seen;
	// a second whole reconcile would mean the first left the condition
	// behind the DaemonSet.
	assert.LessOrEqual(t, completedReconciles(between), 1,
		"%s=True came only after more than one whole reconcile of CNO's since the DaemonSet was available; CNO's log between:\n%s",
		nmstate.ConditionAvailable, tail(between, 40))

	avail := e.waitCondition(time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	t.Logf("%s: %s", nmstate.ConditionAvailable, avail.Message)
	conds := e.operatorConditions()
	for _, typ := range []string{nmstate.ConditionProgressing, nmstate.ConditionDegraded} {
		require.Contains(t, conds, typ)
	}
	assert.Equal(t, operv1.ConditionFalse, conds[nmstate.ConditionDegraded].Status, "%+v", conds[nmstate.ConditionDegraded])
	require.True(t, waitFor(3*time.Minute, func() bool {
		co := e.clusterOperatorConditions()
		for _, typ := range []string{nmstate.ConditionAvailable, nmstate.ConditionProgressing, nmstate.ConditionDegraded} {
			if _, ok := co[typ]; !ok {
				return false
			}
		}
		return co[nmstate.ConditionAvailable].Status == configv1.ConditionTrue
	}), "the KubernetesNMState* conditions on clusteroperator/network: %+v", e.clusterOperatorConditions())
	perReconcile(t, e)
	rolloutLatency(t, e)
}

// TestOptInOnAWS (scenario b): on AWS with spec.kubernetesNMState absent
// the patched CNO deploys nothing of kubernetes-nmstate and says why in its
// conditions; mode Enabled then rolls the handler and webhook out.
func TestOptInOnAWS(t *testing.T) {
	e := start(t, options{platform: configv1.AWSPlatformType})
	off := e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonPlatformNotDefault)
	t.Logf("%s: %s", nmstate.ConditionAvailable, off.Message)
	assert.Contains(t, off.Message, "AWS", "the message names the platform")
	// Another status pass, then nothing of kubernetes-nmstate is there.
	e.reconciled()
	assert.False(t, e.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet), "no handler while off")
	assert.False(t, e.exists(&apiextensionsv1.CustomResourceDefinition{}, "", nmstate.PoliciesCRD), "no CRD while off")
	assert.Empty(t, e.nmstateObjects(), "no kubernetes-nmstate object while off")

	began := time.Now()
	e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	e.waitRolledOut(3 * time.Minute)
	on := e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)
	figure(t, "mode Enabled on AWS to %s=True: %s", nmstate.ConditionAvailable, time.Since(began).Round(100*time.Millisecond))
	t.Logf("%s: %s", nmstate.ConditionAvailable, on.Message)
}

// isNMStateRequest tells the requests CNO sends for kubernetes-nmstate from
// its others, by path and query: its namespace, its API group, its object
// names and label selectors, and the standalone operator's CSVs Bootstrap
// looks for.
func isNMStateRequest(pathAndQuery string) bool {
	return strings.Contains(pathAndQuery, "nmstate") || strings.Contains(pathAndQuery, "nncp-") ||
		strings.Contains(pathAndQuery, "/operators.coreos.com/")
}

// perReconcile logs, as a figure, the requests one idle reconcile of CNO
// sends for kubernetes-nmstate, by verb, and all CNO sends meanwhile: a
// ConfigMap change in CNO's namespace makes it reconcile once.
func perReconcile(t *testing.T, e *env) {
	e.reconciled() // the rollout's reconciles have ended
	row := e.idleReconcile()
	figure(t, "one idle reconcile, from a ConfigMap change to its end: %d requests for kubernetes-nmstate (%v) of %d in all", row.NMState, row.ByVerb, row.All)
	assert.NotZero(t, row.NMState, "the reconcile applied kubernetes-nmstate")
}

// rolloutLatency logs, as a figure, how long after a rollout of the
// handler ends (spec.logLevel changes its verbosity, so every handler pod
// is replaced) the conditions say so: KubernetesNMStateProgressing back to
// False, once it was True for the rollout. Between reconciles only the pod
// watcher can bring it.
func rolloutLatency(t *testing.T, e *env) {
	ds := &appsv1.DaemonSet{}
	require.True(t, e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	generation := ds.Generation
	// Progressing went True and back to False since the patch when its
	// transition time is the patch's or later, whether or not a sample
	// fell in the rollout (transition times are in whole seconds).
	patched := time.Now().Truncate(time.Second)
	e.patchNetwork(`{"spec":{"logLevel":"Debug"}}`)
	var rolledOut, reported time.Time
	var p operv1.OperatorCondition
	require.True(t, waitFor(4*time.Minute, func() bool {
		now := time.Now()
		if rolledOut.IsZero() && e.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Generation > generation && dsAvailable(ds) {
			rolledOut = now
		}
		p = e.operatorConditions()[nmstate.ConditionProgressing]
		if p.Status == operv1.ConditionFalse && !p.LastTransitionTime.Before(&metav1.Time{Time: patched}) && reported.IsZero() {
			reported = now
		}
		return !rolledOut.IsZero() && !reported.IsZero()
	}), "the rollout for spec.logLevel never ended in the conditions; Progressing last: %+v", p)
	figure(t, "a handler rollout (spec.logLevel) ended to %s=False: %s", nmstate.ConditionProgressing, reported.Sub(rolledOut).Round(100*time.Millisecond))
	assert.False(t, reported.Before(rolledOut.Add(-time.Second)), "Progressing was False before the rollout ended")
}
