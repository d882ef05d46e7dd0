//go:build cnoe2e

package cnoe2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/test/cnoe2e/costreport"
)

// measured is what TestWhatThePatchCosts measured, and retried what
// TestRetryAfterFailedApplies did, for TestMain to report; each nil unless
// its test passed.
var (
	measured *costreport.Figures
	retried  *costreport.Retry
)

// lockSamples is how many idle reconciles TestWhatThePatchCosts times the
// status lock over.
const lockSamples = 30

// lockHeldLine is what the patched CNO logs in each reconcile with
// kubernetes-nmstate on.
var lockHeldLine = regexp.MustCompile(`kubernetes-nmstate held the status lock for (\S+) since the previous reconcile`)

// TestWhatThePatchCosts (scenario k): what the patch adds to CNO's requests,
// on the real binaries, in one cluster. With the Default feature set (the
// KubernetesNMState gate off) the pristine and the patched CNO each idle for
// the same minute of their lives, the third after each started (CNO's
// controllers retry what the dev cluster lacks, a ClusterVersion say, with a
// backoff that grows with the process's age): the patched one sends nothing
// the pristine one does not, and writes no KubernetesNMState* condition. Then, with the gates on, one
// idle reconcile of the patched CNO with spec.kubernetesNMState.mode
// Disabled, and one with kubernetes-nmstate on: its reads ask discovery
// nothing more than the pristine CNO's reconcile does.
func TestWhatThePatchCosts(t *testing.T) {
	bins := cnoBinaries(t)
	started := time.Now()
	e := start(t, options{platform: configv1.BareMetalPlatformType, binary: bins.pristine, defaultFeatureSet: true})
	var f costreport.Figures

	e.waitPristineSettled()
	pristineMinute := e.idleMinute(started)
	f.Pristine = e.idleReconcile()

	started = time.Now()
	require.NoError(t, e.cno.Restart(bins.patched))
	e.waitPristineSettled()
	patchedMinute := e.idleMinute(started)
	f.GateOff = e.idleReconcile()
	var extraKeys []string
	f.IdleMinuteExtra, extraKeys = costreport.ExtraRequests(pristineMinute, patchedMinute)
	f.IdleMinutePristine, f.IdleMinutePatched = sum(pristineMinute), sum(patchedMinute)
	for k, c := range patchedMinute {
		if d := c - pristineMinute[k]; d != 0 && pristineMinute[k] != 0 {
			t.Logf("the idle minute, %s: %d by the patched CNO, %d by the pristine one", k, c, pristineMinute[k])
		}
	}
	for typ := range e.operatorConditions() {
		if strings.HasPrefix(typ, "KubernetesNMState") {
			f.GateOffConditions++
		}
	}
	for typ := range e.clusterOperatorConditions() {
		if strings.HasPrefix(typ, "KubernetesNMState") {
			f.GateOffConditions++
		}
	}
	assert.Zero(t, f.IdleMinuteExtra, "the patched CNO with the gate off sent what the pristine one did not: %v", extraKeys)
	assert.Zero(t, f.GateOffConditions, "KubernetesNMState* conditions with the gate off: %s", e.describeConditions())
	assert.Zero(t, f.GateOff.NMState, "requests for kubernetes-nmstate with the gate off")
	assert.Empty(t, e.nmstateObjects(), "kubernetes-nmstate's objects with the gate off")

	e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	require.NoError(t, devcluster.SetFeatureGates(e.ctx(), e.c, devcluster.CNOCluster{ReleaseVersion: releaseVersion, Tree: bins.tree, EnabledGates: gates}))
	require.NoError(t, e.cno.Restart(bins.patched))
	e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	e.reconciled()
	f.Disabled = e.idleReconcile()

	e.patchNetwork(`{"spec":{"kubernetesNMState":null}}`)
	e.waitRolledOut(4 * time.Minute)
	e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	e.reconciled()
	f.On = e.idleReconcile()
	assert.LessOrEqual(t, f.On.Discovery, f.Pristine.Discovery, "kubernetes-nmstate's reads asked discovery")
	assert.NotZero(t, f.On.NMState, "the reconcile applied kubernetes-nmstate")

	mark := len(e.cno.Log())
	for range lockSamples {
		e.reconciled()
	}
	for _, m := range lockHeldLine.FindAllStringSubmatch(e.cno.Log()[mark:], -1) {
		d, err := time.ParseDuration(m[1])
		require.NoError(t, err, m[0])
		f.LockHeld = append(f.LockHeld, d)
	}
	require.GreaterOrEqual(t, len(f.LockHeld), lockSamples, "the patched CNO logged the status lock's hold in fewer reconciles than it ran")

	t.Logf("figures:\n%s", f.DocSection())
	if !t.Failed() {
		measured = &f
	}
}

// idleMinuteAt is when, in a CNO process's life, idleMinute begins: it has
// settled by then.
const idleMinuteAt = 2 * time.Minute

// idleMinute counts CNO's requests, watches left out, by verb and path,
// over the minute after a ConfigMap change in its namespace, at
// idleMinuteAt after started.
func (e *env) idleMinute(started time.Time) map[string]int {
	e.t.Helper()
	wait := time.Until(started.Add(idleMinuteAt))
	require.Positive(e.t, wait, "CNO took longer than %s to settle", idleMinuteAt)
	time.Sleep(wait)
	before := len(e.proxy.Requests())
	e.touchCNO()
	time.Sleep(time.Minute)
	out := map[string]int{}
	for _, r := range e.requestsSince(before) {
		out[costreport.RequestKey(r.Method, r.Path)]++
	}
	return out
}

// idleReconcile is what CNO sent in one idle reconcile, from a ConfigMap
// change to the reconcile's end.
func (e *env) idleReconcile() costreport.Row {
	e.t.Helper()
	before := len(e.proxy.Requests())
	e.reconciled()
	row := costreport.Row{ByVerb: map[string]int{}}
	for _, r := range e.requestsSince(before) {
		row.All++
		row.Bytes += r.Bytes
		if devcluster.IsDiscovery(r.Path) {
			row.Discovery++
		}
		if isNMStateRequest(r.Path + "?" + r.Query) {
			row.NMState++
			row.NMStateBytes += r.Bytes
			row.ByVerb[costreport.VerbOf(r.Method, r.Path)]++
		}
	}
	return row
}

// requestsSince is what CNO asked through the proxy after its first
// before requests, watches left out: they stay open across any window.
func (e *env) requestsSince(before int) []devcluster.ProxiedRequest {
	var out []devcluster.ProxiedRequest
	for _, r := range e.proxy.Requests()[before:] {
		if !strings.Contains(r.Query, "watch=true") {
			out = append(out, r)
		}
	}
	return out
}

func sum(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
