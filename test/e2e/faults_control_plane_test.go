package e2e

// Faults of the real control plane under a running host, on the cluster with
// real controllers and kwok nodes: kube-apiserver restarted in the middle of
// an apply, etcd stopped for 30 seconds, the host killed during a rollout.
// Each must converge with nothing lost, and every status the host wrote must
// have been true when it was written. That is checked against etcd's own
// history (recordEtcd), the one record that survives both faults.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// workerPlacement moves the handler to the three Linux workers: a new
// DaemonSet spec for the host to apply.
const workerPlacement = `{"spec":{"kubernetesNMState":{"mode":"Enabled","handlerPlacement":{"nodeSelector":{"node-role.kubernetes.io/worker":""}}}}}`

// onWorkers says whether a DaemonSet has the worker placement.
func onWorkers(ds *appsv1.DaemonSet) bool {
	_, ok := ds.Spec.Template.Spec.NodeSelector["node-role.kubernetes.io/worker"]
	return ok
}

// appliesWorkerDaemonSet matches the host's apply of the handler DaemonSet
// with the worker placement.
func appliesWorkerDaemonSet(req *http.Request) bool {
	if !strings.HasSuffix(req.URL.Path, "/daemonsets/"+nmstate.HandlerDaemonSet) || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	return err == nil && bytes.Contains(data, []byte(`"node-role.kubernetes.io/worker"`))
}

// TestFaultControlPlaneAPIServerRestart: kubernetes-nmstate is enabled again
// (after a disable that kept the CRDs, the admission policy and a user's
// policy) with a new handler placement, and kube-apiserver restarts when the
// host, having applied the RBAC, applies the DaemonSet: that apply and the
// rest of the sync fail. The status the host writes for the failed sync lands
// once the server is back and must say Retrying, not Degraded, and what is
// there (nothing yet). The host then applies everything with the new spec
// and converges; nothing kept was recreated.
func TestFaultControlPlaneAPIServerRestart(t *testing.T) {
	k, history, gate := startGatedHost(t)
	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitGone(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	kept := k.waitSnapshot(append(keptObjects(t), nncp(t, "bond0")))

	k.patchNetwork(workerPlacement)
	require.True(t, waitUntil(gate.holding), "the host never applied the new DaemonSet; its conditions: %+v", k.conditions())
	start := time.Now()
	var statusHeld bool
	require.NoError(t, k.dc.RestartAPIServer(func() {
		gate.release()
		// The rest of the sync fails at once and its status write is held
		// until the server is back, so that it lands after the restart.
		statusHeld = waitUntil(func() bool { return gate.statusHeld.Load() > 0 })
	}))
	require.True(t, statusHeld, "the host wrote no status for the failed sync while kube-apiserver was down; the held apply: %s", gate.result())
	restarted := time.Since(start)
	gate.recover()
	require.Contains(t, gate.result(), "connection refused", "the DaemonSet's apply reached a server that was down")

	objs := rendered(t, workerPlacement, bareMetalHA)
	k.waitSnapshot(objs)
	k.waitOperandsSettled(3, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	converged := time.Since(start)
	events := k.stopEtcdLog(history)

	assert.Empty(t, k.lost(kept), "kept objects and the user's policy survive")
	assert.Equal(t, []string{"bond0"}, nncpNames(t, k))
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.True(t, onWorkers(ds), "the DaemonSet has the new placement: %v", ds.Spec.Template.Spec.NodeSelector)
	retrying := auditStatuses(t, decidedOn(hostWrites(t, events, networkGenerationFrom(events, k.network().GetGeneration())), userEnabled), onWorkers)
	require.NotEmpty(t, retrying, "the status written for the failed sync says Retrying")
	assert.Regexp(t, `^retrying in [0-9.]+m?s after: applying DaemonSet `+nmstate.Namespace+"/"+nmstate.HandlerDaemonSet+": ", retrying[0],
		"the back-off, then the error")
	assert.Contains(t, retrying[0], "connection refused")
	t.Logf("kube-apiserver stopped at the host's DaemonSet apply (of %d objects) and was serving again %s later; converged %s after the restart began; the host wrote Retrying: %s",
		len(objs), restarted.Round(time.Millisecond), converged.Round(time.Millisecond), retrying[0])
}

// startGatedHost starts the sample bare-metal cluster, records etcd's
// history, and runs the host behind a fault gate that holds its apply of the
// DaemonSet with the worker placement; it returns once the default rollout
// has settled and the user's policy bond0 exists.
func startGatedHost(t *testing.T) (*cluster, *eventLog, *faultGate) {
	t.Helper()
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	history := k.recordEtcd()
	gate := newFaultGate(appliesWorkerDaemonSet)
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = gate.wrap
	k.startHostWith(cfg)
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.createPolicy("bond0")
	return k, history, gate
}

// etcdOutage is how long etcd is stopped.
const etcdOutage = 30 * time.Second

// TestFaultControlPlaneEtcdStopped: etcd stops for 30 seconds just as the
// host applies a new handler placement. kube-apiserver keeps running: it
// holds the apply, and answers 504 once its 34-second bound on a write runs
// out; etcd stays down until then, so that the host sees the failure rather
// than a slow success. The status of the failed sync, written once the API
// server stores writes again, says Retrying (two minutes of grace, the
// default): never Degraded. Nothing is deleted, and the placement converges.
func TestFaultControlPlaneEtcdStopped(t *testing.T) {
	k, history, gate := startGatedHost(t)
	before := k.waitSnapshot(append(rendered(t, "", bareMetalHA), nncp(t, "bond0")))

	k.patchNetwork(workerPlacement)
	require.True(t, waitUntil(gate.holding), "the host never applied the new DaemonSet; its conditions: %+v", k.conditions())
	start := time.Now()
	require.NoError(t, k.dc.RestartEtcd(func() {
		gate.release()
		time.Sleep(etcdOutage) // the fault's duration
		waitUntil(gate.returned)
	}))
	outage := time.Since(start)
	require.Contains(t, gate.result(), "504", "kube-apiserver gave up on the DaemonSet's apply while etcd was down")
	k.waitWritable()
	writable := time.Since(start)
	gate.recover()

	k.waitOperandsSettled(3, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	converged := time.Since(start)
	events := k.stopEtcdLog(history)

	assert.Empty(t, k.lost(before), "nothing deleted or recreated")
	assert.Equal(t, []string{"bond0"}, nncpNames(t, k))
	retrying := auditStatuses(t, decidedOn(hostWrites(t, events, networkGenerationFrom(events, k.network().GetGeneration())), userEnabled), onWorkers)
	require.NotEmpty(t, retrying, "the status written for the failed sync says Retrying")
	assert.Contains(t, retrying[0], "applying DaemonSet "+nmstate.Namespace+"/"+nmstate.HandlerDaemonSet+": ")
	t.Logf("etcd down for %s (the host's apply failed: %s); kube-apiserver stored writes again %s after the stop; converged after %s; the host wrote Retrying: %s",
		outage.Round(time.Millisecond), gate.result(), writable.Round(time.Millisecond), converged.Round(time.Millisecond), retrying[0])
}

// bumpedImage is the handler image of an upgrade.
const bumpedImage = handlerImage + "-bumped"

func withImage(image string) hostOption {
	return func(o *controller.Options) { o.Images.Handler = image }
}

func hasImage(image string) func(*appsv1.DaemonSet) bool {
	return func(ds *appsv1.DaemonSet) bool { return ds.Spec.Template.Spec.Containers[0].Image == image }
}

// TestFaultControlPlaneHostKilledMidRollout: a host with a new image (an
// upgrade) starts the handler's rollout, whose new pods are held as a slow
// image pull holds them, and is killed while it is under way. A new host,
// with nothing in memory, takes over: it changes nothing (no object
// rewritten, the DaemonSet's generation kept, so the rollout is not
// restarted), keeps the time Progressing turned True (what RolloutHung is
// timed from), and reports the rollout through to its end. No object is
// recreated.
func TestFaultControlPlaneHostKilledMidRollout(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	history := k.recordEtcd()
	stop := k.runHost(k.cfg)
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.createPolicy("bond0")
	objs := rendered(t, "", bareMetalHA)
	before := k.waitSnapshot(append(objs, nncp(t, "bond0")))
	require.NoError(t, stop())
	upgrade, err := strconv.ParseUint(k.network().GetResourceVersion(), 10, 64)
	require.NoError(t, err)

	releaseHandlers := k.holdPods(nmstate.HandlerDaemonSet)
	stop = k.runHost(k.cfg, withImage(bumpedImage))
	var rolling operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		rolling = k.conditions()[nmstate.ConditionProgressing]
		return rolling.Reason == nmstate.ReasonRollingOut && strings.HasPrefix(rolling.Message, "handler updated on 0 of 6 nodes, ready on 5")
	}), "the host never reported the held rollout: %+v", rolling)
	start := time.Now()
	require.NoError(t, stop(), "the host is killed mid-rollout")

	ds, dep := &appsv1.DaemonSet{}, &appsv1.Deployment{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.True(t, k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment))
	var others []*unstructured.Unstructured
	for _, obj := range objs {
		if kind := obj.GetKind(); kind != "DaemonSet" && kind != "Deployment" {
			others = append(others, obj)
		}
	}
	unchanged, err := devcluster.ResourceVersions(k.ctx(), k.c, others)
	require.NoError(t, err)

	reconciles := &reconcileCounter{}
	k.launchHost(k.cfg, withImage(bumpedImage), reconciles.option())
	require.True(t, waitUntil(func() bool { return reconciles.n.Load() > 0 }), "the new host never reconciled; conditions: %+v", k.conditions())
	// A reconcile after a change the host watches has started once the
	// first, its start-up reconcile with its status write, has finished.
	reconciles.after(t, func() { k.patchNetwork(`{"metadata":{"annotations":{"e2e.cno-nmstate.io/touched":"true"}}}`) })
	took := time.Since(start)
	progressing := k.conditions()[nmstate.ConditionProgressing]
	assert.Equal(t, nmstate.ReasonRollingOut, progressing.Reason, "still rolling out: %+v", progressing)
	assert.True(t, rolling.LastTransitionTime.Equal(&progressing.LastTransitionTime), "Progressing True since %s, as the killed host wrote, not %s",
		rolling.LastTransitionTime, progressing.LastTransitionTime)
	ds2, dep2 := &appsv1.DaemonSet{}, &appsv1.Deployment{}
	require.True(t, k.exists(ds2, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.True(t, k.exists(dep2, nmstate.Namespace, nmstate.WebhookDeployment))
	assert.Equal(t, ds.Generation, ds2.Generation, "the DaemonSet's rollout was not restarted")
	assert.Equal(t, dep.Generation, dep2.Generation, "the webhook's rollout was not restarted")
	now, err := devcluster.ResourceVersions(k.ctx(), k.c, others)
	require.NoError(t, err)
	assert.Equal(t, unchanged, now, "the new host rewrote none of the other objects")

	releaseHandlers()
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	events := k.stopEtcdLog(history)

	assert.Empty(t, k.lost(before), "no object deleted or recreated")
	writes := hostWrites(t, events, upgrade)
	auditStatuses(t, writes, hasImage(bumpedImage))
	var since *operv1.OperatorCondition
	for _, w := range writes {
		p := w.conds[nmstate.ConditionProgressing]
		if p.Status != operv1.ConditionTrue {
			break
		}
		if since == nil {
			since = &p
		}
		assert.True(t, since.LastTransitionTime.Equal(&p.LastTransitionTime), "revision %d: Progressing True since %s, not %s", w.rv, since.LastTransitionTime, p.LastTransitionTime)
	}
	t.Logf("the new host took over the held rollout %s after the kill with nothing rewritten and Progressing True since %s; the rollout then finished on the new image",
		took.Round(time.Millisecond), rolling.LastTransitionTime)
}

// keptObjects are the rendered objects that stay when disabled.
func keptObjects(t *testing.T) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range rendered(t, "", bareMetalHA) {
		gvk := obj.GroupVersionKind()
		if nmstate.KeptOnDisable(gvk.Group, gvk.Kind, obj.GetName()) {
			out = append(out, obj)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// waitWritable waits until the API server stores writes again: after etcd
// is back, it takes kube-apiserver's etcd client a while to reconnect.
func (k *cluster) waitWritable() {
	k.t.Helper()
	var err error
	require.True(k.t, waitFor(2*time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(k.ctx(), 5*time.Second)
		defer cancel()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.cno-nmstate.io/written":%q}}}`, time.Now().Format(time.RFC3339Nano))
		err = k.c.Patch(ctx, ns, client.RawPatch(types.MergePatchType, []byte(patch)))
		return err == nil
	}), "the API server never stored a write again: %v", err)
}

// faultGate holds the host's requests around a fault. The first apply that
// hold matches waits until release, so that the fault strikes in the middle
// of the host's sync. While the fault lasts (release to recover) the host's
// requests for the Network itself (the live read of its conditions and the
// status write) wait for recover, so that the status of the failed sync is
// written when the API server can store it again rather than lost to the
// same fault (whether a request sent meanwhile succeeds would depend on when
// the API server reconnects).
type faultGate struct {
	hold       func(*http.Request) bool
	matched    atomic.Bool
	held       chan struct{} // closed when an apply is held
	released   chan struct{}
	done       chan struct{} // closed when the held apply has returned
	outcome    string        // of the held apply, set before done is closed
	faulted    atomic.Bool
	recovered  chan struct{}
	statusHeld atomic.Int32 // requests for the Network held while faulted
}

func newFaultGate(hold func(*http.Request) bool) *faultGate {
	return &faultGate{hold: hold, held: make(chan struct{}), released: make(chan struct{}), done: make(chan struct{}), recovered: make(chan struct{})}
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// holding reports whether an apply is held.
func (g *faultGate) holding() bool { return closed(g.held) }

// returned reports whether the held apply has returned.
func (g *faultGate) returned() bool { return closed(g.done) }

// result is how the held apply ended: an HTTP status or an error.
func (g *faultGate) result() string {
	if !g.returned() {
		return "still in flight"
	}
	return g.outcome
}

// release lets the held apply go on, into the fault.
func (g *faultGate) release() {
	g.faulted.Store(true)
	close(g.released)
}

// recover lets the held requests for the Network go on.
func (g *faultGate) recover() {
	g.faulted.Store(false)
	close(g.recovered)
}

// waitOrDone waits for ch, or for the host to give the request up.
func waitOrDone(req *http.Request, ch chan struct{}) {
	select {
	case <-ch:
	case <-req.Context().Done():
	}
}

func (g *faultGate) wrap(rt http.RoundTripper) http.RoundTripper {
	return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		isApply := req.Method == http.MethodPatch && strings.Contains(req.Header.Get("Content-Type"), "apply-patch")
		switch {
		case strings.HasSuffix(req.URL.Path, "/networks/cluster") || strings.HasSuffix(req.URL.Path, "/networks/cluster/status"):
			if g.faulted.Load() {
				g.statusHeld.Add(1)
				waitOrDone(req, g.recovered)
			}
		case isApply && g.hold(req) && g.matched.CompareAndSwap(false, true):
			close(g.held)
			waitOrDone(req, g.released)
			resp, err := rt.RoundTrip(req)
			g.outcome = fmt.Sprint(err)
			if err == nil {
				g.outcome = resp.Status
			}
			close(g.done)
			return resp, err
		}
		return rt.RoundTrip(req)
	})
}

// hostWrite is a status the host wrote: the Network's conditions at a
// revision, and the workloads as the controllers had last written them.
type hostWrite struct {
	rv      uint64
	conds   map[string]operv1.OperatorCondition
	ds      *appsv1.DaemonSet  // nil: absent
	webhook *appsv1.Deployment // nil: absent
}

// hostWrites replays etcd's history and returns each status the host wrote
// to the Network (a change of its conditions) after revision since, with the
// DaemonSet and Deployment as last written before it.
func hostWrites(t *testing.T, events []loggedEvent, since uint64) []hostWrite {
	t.Helper()
	var ds *appsv1.DaemonSet
	var dep *appsv1.Deployment
	var previous []operv1.OperatorCondition
	var writes []hostWrite
	for _, e := range events {
		switch o := e.obj.(type) {
		case *appsv1.DaemonSet:
			ds = o
			if e.typ == watch.Deleted {
				ds = nil
			}
		case *appsv1.Deployment:
			dep = o
			if e.typ == watch.Deleted {
				dep = nil
			}
		case *unstructured.Unstructured:
			conds := nmstate.NetworkConditions(o)
			changed := !equalConditions(previous, conds)
			previous = conds
			if !changed || e.rv <= since {
				continue
			}
			w := hostWrite{rv: e.rv, conds: map[string]operv1.OperatorCondition{}, ds: ds, webhook: dep}
			for _, c := range conds {
				w.conds[c.Type] = c
			}
			writes = append(writes, w)
		}
	}
	require.NotEmpty(t, writes, "the host wrote its status after revision %d", since)
	return writes
}

// auditStatuses checks each status the host wrote against the DaemonSet and
// Deployment as last written before it: never
// Degraded (every fault here is shorter than the grace); Available True only
// with a handler available; RollingOut or AsExpected only while both
// workloads exist; a missing workload named as missing, and no other;
// Progressing False only once the controllers report the wanted spec (want)
// rolled out. It returns the Progressing messages of the Retrying writes.
//
// The check is strict, with no allowance for the host's cache lagging the
// controllers: in these tests nothing un-settles a rollout or removes a
// workload but the host's own applies and deletes, which it has seen.
func auditStatuses(t *testing.T, writes []hostWrite, want func(*appsv1.DaemonSet) bool) (retrying []string) {
	t.Helper()
	require.NotEmpty(t, writes, "statuses to check")
	for _, w := range writes {
		t.Logf("status at revision %d: %s; DaemonSet %s; Deployment %s", w.rv, w, rolloutOf(w.ds), rolloutOf(w.webhook))
		for _, problem := range w.problems(want) {
			t.Errorf("the status written at revision %d %s: %s; DaemonSet %s; Deployment %s", w.rv, problem, w, rolloutOf(w.ds), rolloutOf(w.webhook))
		}
		if p := w.conds[nmstate.ConditionProgressing]; p.Reason == nmstate.ReasonRetrying {
			retrying = append(retrying, p.Message)
		}
	}
	return retrying
}

// userEnabled is in every Available message the host writes when
// spec.kubernetesNMState.mode Enabled turned it on.
const userEnabled = "enabled by spec.kubernetesNMState.mode"

// decidedOn drops the writes before the first whose Available message says
// decision: a reconcile that had read the Network before an edit may write
// after it, and its status is true of the spec it read (a write of the
// previous Disabled, "AsExpected" with no workloads, landed after the enable
// in one run). Reconciles run one at a time on a cache that only moves
// forward, so every later write was decided on the edit.
func decidedOn(writes []hostWrite, decision string) []hostWrite {
	for i, w := range writes {
		if strings.Contains(w.conds[nmstate.ConditionAvailable].Message, decision) {
			return writes[i:]
		}
	}
	return nil
}

// networkGenerationFrom is the revision at which the Network's spec reached
// generation.
func networkGenerationFrom(events []loggedEvent, generation int64) uint64 {
	for _, e := range events {
		if o, ok := e.obj.(*unstructured.Unstructured); ok && o.GetGeneration() == generation {
			return e.rv
		}
	}
	return 0
}

func (w hostWrite) problems(want func(*appsv1.DaemonSet) bool) []string {
	var out []string
	available, progressing, degraded := w.conds[nmstate.ConditionAvailable], w.conds[nmstate.ConditionProgressing], w.conds[nmstate.ConditionDegraded]
	if degraded.Status != operv1.ConditionFalse {
		out = append(out, "is Degraded within the grace")
	}
	if available.Status == operv1.ConditionTrue && (w.ds == nil || w.ds.Status.NumberAvailable == 0) {
		out = append(out, "is Available with no handler available")
	}
	if (progressing.Reason == nmstate.ReasonRollingOut || progressing.Reason == nmstate.ReasonAsExpected) && (w.ds == nil || w.webhook == nil) {
		out = append(out, "is "+progressing.Reason+" with a workload missing")
	}
	switch missing := missingSummary(w.ds, w.webhook); {
	case missing == "" && strings.Contains(progressing.Message, "to be created"):
		out = append(out, "says a workload is yet to be created when both exist")
	case !strings.Contains(progressing.Message, missing):
		out = append(out, fmt.Sprintf("does not say %q", missing))
	}
	if progressing.Status == operv1.ConditionFalse && !rolledOut(w.ds, w.webhook, want) {
		out = append(out, "is not Progressing before the wanted spec rolled out")
	}
	return out
}

// missingSummary is what Progressing must say of absent workloads.
func missingSummary(ds *appsv1.DaemonSet, dep *appsv1.Deployment) string {
	switch {
	case ds == nil && dep == nil:
		return "waiting for the handler DaemonSet and webhook Deployment to be created"
	case ds == nil:
		return "waiting for the handler DaemonSet to be created"
	case dep == nil:
		return "waiting for the webhook Deployment to be created"
	}
	return ""
}

// rolledOut: the controllers report the wanted spec on every node and replica.
func rolledOut(ds *appsv1.DaemonSet, dep *appsv1.Deployment, want func(*appsv1.DaemonSet) bool) bool {
	if ds == nil || dep == nil || !want(ds) {
		return false
	}
	s, d := ds.Status, dep.Status
	replicas := ptr.Deref(dep.Spec.Replicas, 1)
	return s.ObservedGeneration == ds.Generation && s.DesiredNumberScheduled > 0 &&
		s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled &&
		d.ObservedGeneration == dep.Generation && d.UpdatedReplicas == replicas && d.AvailableReplicas == replicas
}

// String is the write's conditions in one line.
func (w hostWrite) String() string {
	var parts []string
	for _, typ := range []string{nmstate.ConditionAvailable, nmstate.ConditionProgressing, nmstate.ConditionDegraded} {
		c := w.conds[typ]
		parts = append(parts, fmt.Sprintf("%s %s/%s %.110q", strings.TrimPrefix(typ, "KubernetesNMState"), c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, ", ")
}

// rolloutOf is a workload's generation and what its controller reports.
func rolloutOf(obj client.Object) string {
	switch o := obj.(type) {
	case *appsv1.DaemonSet:
		if o != nil {
			s := o.Status
			return fmt.Sprintf("generation %d observed %d, %d desired, %d updated, %d available", o.Generation, s.ObservedGeneration, s.DesiredNumberScheduled, s.UpdatedNumberScheduled, s.NumberAvailable)
		}
	case *appsv1.Deployment:
		if o != nil {
			s := o.Status
			return fmt.Sprintf("generation %d observed %d, %d updated, %d available", o.Generation, s.ObservedGeneration, s.UpdatedReplicas, s.AvailableReplicas)
		}
	}
	return "absent"
}

func equalConditions(a, b []operv1.OperatorCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message ||
			!a[i].LastTransitionTime.Equal(&b[i].LastTransitionTime) {
			return false
		}
	}
	return true
}

// etcdKeys are the objects recordEtcd follows, each with its Go type.
var etcdKeys = map[string]client.Object{
	"/registry/operator.openshift.io/networks/cluster":                             &unstructured.Unstructured{},
	"/registry/daemonsets/" + nmstate.Namespace + "/" + nmstate.HandlerDaemonSet:   &appsv1.DaemonSet{},
	"/registry/deployments/" + nmstate.Namespace + "/" + nmstate.WebhookDeployment: &appsv1.Deployment{},
}

// recordEtcd follows every revision of the Network, the handler DaemonSet and
// the webhook Deployment since the cluster started, read from etcd's own
// watch API (its JSON gateway), into an eventLog in revision order. A watch
// through kube-apiserver cannot cross the API server's restart: the new
// server's watch cache starts at the current revision and answers an older
// resourceVersion with 410 Gone, so what was written around the restart
// would be lost. etcd keeps its history across its own restart, and each
// watch resumes from the revision after the last it delivered.
func (k *cluster) recordEtcd() *eventLog {
	k.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &eventLog{t: k.t, cancel: cancel}
	k.t.Cleanup(func() { l.stop() })
	decoder := serializer.NewCodecFactory(k.c.Scheme()).UniversalDeserializer()
	for key, proto := range etcdKeys {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			next := int64(1)
			for ctx.Err() == nil {
				var err error
				next, err = followEtcdKey(ctx, k.dc.EtcdURL(), key, next, func(ev etcdEvent) { l.addEtcdEvent(decoder, proto, ev) })
				switch {
				case ctx.Err() != nil:
				case errors.Is(err, errCompacted):
					l.mu.Lock()
					l.errs = append(l.errs, err.Error())
					l.mu.Unlock()
					return
				default: // etcd went away (RestartEtcd): resume once it is back
					time.Sleep(tick)
				}
			}
		}()
	}
	return l
}

// errCompacted: etcd no longer has revisions the log has not read.
var errCompacted = errors.New("etcd compacted history the log had not read")

// etcdEvent is an event of etcd's JSON watch API (mvccpb.Event).
type etcdEvent struct {
	Type string `json:"type"` // PUT (omitted) or DELETE
	KV   struct {
		CreateRevision int64  `json:"create_revision,string"`
		ModRevision    int64  `json:"mod_revision,string"`
		Value          []byte `json:"value"`
	} `json:"kv"`
}

// followEtcdKey watches key from revision from, passes each event to add,
// and returns the revision to resume from when the stream ends.
func followEtcdKey(ctx context.Context, etcdURL, key string, from int64, add func(etcdEvent)) (int64, error) {
	body, err := json.Marshal(map[string]any{"create_request": map[string]any{
		"key": base64.StdEncoding.EncodeToString([]byte(key)), "start_revision": strconv.FormatInt(from, 10),
	}})
	if err != nil {
		return from, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, etcdURL+"/v3/watch", bytes.NewReader(body))
	if err != nil {
		return from, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return from, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Result struct {
				CompactRevision int64       `json:"compact_revision,string"`
				Events          []etcdEvent `json:"events"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			return from, fmt.Errorf("watching %s in etcd: %w", key, err)
		}
		switch {
		case msg.Error != nil:
			return from, fmt.Errorf("watching %s in etcd: %s", key, msg.Error.Message)
		case msg.Result.CompactRevision != 0:
			return from, fmt.Errorf("%w: %s from revision %d", errCompacted, key, from)
		}
		for _, ev := range msg.Result.Events {
			add(ev)
			from = ev.KV.ModRevision + 1
		}
	}
}

// addEtcdEvent decodes a value as kube-apiserver stored it (protobuf for
// built-in kinds, JSON for custom resources) and logs it at its revision; a
// value it cannot decode leaves the log incomplete, which stop reports.
func (l *eventLog) addEtcdEvent(decoder runtime.Decoder, proto client.Object, ev etcdEvent) {
	obj := proto.DeepCopyObject().(client.Object)
	typ := watch.Modified
	switch {
	case ev.Type == "DELETE":
		typ = watch.Deleted
	case ev.KV.CreateRevision == ev.KV.ModRevision:
		typ = watch.Added
	}
	var err error
	if typ != watch.Deleted {
		_, _, err = decoder.Decode(ev.KV.Value, nil, obj)
	}
	obj.SetResourceVersion(strconv.FormatInt(ev.KV.ModRevision, 10))
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.errs = append(l.errs, fmt.Sprintf("decoding a %T from etcd at revision %d: %v", obj, ev.KV.ModRevision, err))
		return
	}
	l.events = append(l.events, loggedEvent{rv: uint64(ev.KV.ModRevision), typ: typ, obj: obj})
}

// stopEtcdLog waits until the log has caught up with what the API server
// now holds for each followed object, then stops it.
func (k *cluster) stopEtcdLog(l *eventLog) []loggedEvent {
	k.t.Helper()
	current := []string{k.network().GetResourceVersion()}
	ds, dep := &appsv1.DaemonSet{}, &appsv1.Deployment{}
	if k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) {
		current = append(current, ds.ResourceVersion)
	}
	if k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment) {
		current = append(current, dep.ResourceVersion)
	}
	require.True(k.t, waitUntil(func() bool {
		logged := map[string]bool{}
		for _, e := range l.sorted() {
			logged[strconv.FormatUint(e.rv, 10)] = true
		}
		for _, rv := range current {
			if !logged[rv] {
				return false
			}
		}
		return true
	}), "etcd's history never reached the current resourceVersions %v", current)
	return l.stop()
}
