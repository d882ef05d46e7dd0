//go:build cnoe2e

package cnoe2e

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/test/cnoe2e/costreport"
)

// permissiveNetworkCRD is the shipped Network.operator CRD with no schema
// for spec.kubernetesNMState (x-kubernetes-preserve-unknown-fields): as an
// older or hand-edited CRD would let `mode: enabled` through.
func permissiveNetworkCRD(t *testing.T) string {
	t.Helper()
	path, err := devcluster.WritePermissiveNetworkCRD(networkCRD, t.TempDir())
	require.NoError(t, err)
	return path
}

// badPlacement is a handlerPlacement the shipped schema lets through (the
// node affinity's operator is a free string there) and the API server's
// DaemonSet validation refuses.
const badPlacement = `{"spec":{"kubernetesNMState":{"mode":"Enabled","handlerPlacement":{"affinity":{"nodeAffinity":{` +
	`"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[` +
	`{"key":"kubernetes.io/os","operator":"Bogus","values":["linux"]}]}]}}}}}}}`

// failNMStateReads answers every read of the nmstate.io API and of
// workloads in openshift-nmstate with 500: what Bootstrap and the status
// manager read about kubernetes-nmstate.
func failNMStateReads(req *http.Request) int {
	if req.Method != http.MethodGet {
		return 0
	}
	p := req.URL.Path
	if strings.HasPrefix(p, "/apis/nmstate.io/") || strings.HasPrefix(p, "/apis/operators.coreos.com/") ||
		strings.Contains(p, "/namespaces/"+nmstate.Namespace+"/daemonsets") || strings.Contains(p, "/namespaces/"+nmstate.Namespace+"/deployments") {
		return http.StatusInternalServerError
	}
	return 0
}

// TestBadConfigAndFailedRead (scenario c): with the handler and webhook
// running, (1) `mode: enabled` (through an older schema), (2) a
// handlerPlacement the schema lets through and the API server refuses, and
// (3) a minute of failed reads of kubernetes-nmstate's objects by CNO (a
// fault proxy in front of the API server, for CNO only): at every sample,
// once a second, nothing CNO deployed is deleted and no KubernetesNMState*
// condition says something false (see falseClaims).
func TestBadConfigAndFailedRead(t *testing.T) {
	e, deployed, _ := deployedOnBareMetal(t, options{networkCRD: permissiveNetworkCRD(t), nmstate: map[string]any{"mode": "Enabled"}})

	t.Run("mode enabled", func(t *testing.T) {
		s := e.sample(deployed, time.Time{})
		e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"enabled"}}}`)
		deg := e.waitCondition(4*time.Minute, nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonInvalidConfig)
		t.Logf("%s: %s", nmstate.ConditionDegraded, deg.Message)
		assert.Contains(t, deg.Message, `"enabled"`, "the message names the bad value")
		// Two more whole reconciles: pruning is asynchronous.
		e.reconciled()
		e.reconciled()
		samples, problems := s.stop()
		t.Logf("%d samples", samples)
		assert.Empty(t, problems, "with a bad mode")
		assert.Empty(t, e.cnoDeletes(), "DELETE requests by CNO")
		e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
		e.waitCondition(4*time.Minute, nmstate.ConditionDegraded, operv1.ConditionFalse, "")
	})

	t.Run("handlerPlacement refused by the API server", func(t *testing.T) {
		s := e.sample(deployed, time.Time{})
		e.patchNetwork(badPlacement)
		var deg operv1.OperatorCondition
		ok := waitFor(4*time.Minute, func() bool {
			deg = e.operatorConditions()[nmstate.ConditionDegraded]
			return deg.Status == operv1.ConditionTrue || strings.Contains(e.operatorConditions()[nmstate.ConditionProgressing].Message, "Bogus")
		})
		t.Logf("after %s: conditions %s", badPlacement, e.describeConditions())
		assert.True(t, ok, "the bad placement never showed in the conditions; Degraded last: %+v", deg)
		e.reconciled()
		samples, problems := s.stop()
		t.Logf("%d samples", samples)
		assert.Empty(t, problems, "with a bad handlerPlacement")
		assert.Empty(t, e.cnoDeletes(), "DELETE requests by CNO")
		e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled","handlerPlacement":null}}}`)
		e.waitCondition(4*time.Minute, nmstate.ConditionDegraded, operv1.ConditionFalse, "")
		e.waitCondition(4*time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, "")
	})

	t.Run("failed reads", func(t *testing.T) {
		began := time.Now()
		s := e.sample(deployed, began)
		e.proxy.SetFault(failNMStateReads)
		// Six whole reconciles of CNO's during the fault, each made by a
		// ConfigMap change in its namespace.
		for range 6 {
			e.reconciled()
		}
		e.proxy.SetFault(nil)
		injected := 0
		for _, r := range e.proxy.Requests() {
			if r.Injected != 0 {
				injected++
			}
		}
		e.reconciled()
		samples, problems := s.stop()
		t.Logf("%d samples; %d of CNO's reads failed by the proxy; conditions now: %s", samples, injected, e.describeConditions())
		require.NotZero(t, injected, "the fault reached CNO")
		assert.Empty(t, problems, "during and after a minute of failed reads")
		assert.Empty(t, e.cnoDeletes(), "DELETE requests by CNO")
	})
}

// TestRestartWithBadConfig (scenario d): CNO restarted while the operator
// config holds `mode: enabled`: after the restart (its keep flag starts
// anew) nothing CNO deployed is deleted.
func TestRestartWithBadConfig(t *testing.T) {
	e, deployed, _ := deployedOnBareMetal(t, options{networkCRD: permissiveNetworkCRD(t), nmstate: map[string]any{"mode": "Enabled"}})
	e.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"enabled"}}}`)
	e.waitCondition(4*time.Minute, nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonInvalidConfig)
	s := e.sample(deployed, time.Time{})
	require.NoError(t, e.cno.Restart(""))
	// The restarted CNO reconciles at once (its caches fill), then every
	// status pass may prune: watch six whole reconciles, made by ConfigMap
	// events.
	for range 6 {
		e.reconciled()
	}
	samples, problems := s.stop()
	t.Logf("%d samples after the restart; CNO started %d times; conditions: %s", samples, e.cno.Starts(), e.describeConditions())
	assert.Empty(t, problems, "after CNO restarted with a bad config")
	assert.Empty(t, e.cnoDeletes(), "DELETE requests by CNO")
	deg := e.operatorConditions()[nmstate.ConditionDegraded]
	assert.Equal(t, operv1.ConditionTrue, deg.Status, "still Degraded for the bad mode after the restart: %+v", deg)
}

// failHandlerApply refuses CNO's server-side apply of the handler DaemonSet,
// and nothing else: kubernetes-nmstate alone fails, and the rest of CNO's
// reconcile succeeds.
func failHandlerApply(req *http.Request) int {
	if req.Method == http.MethodPatch && req.URL.Path == "/apis/apps/v1/namespaces/"+nmstate.Namespace+"/daemonsets/"+nmstate.HandlerDaemonSet {
		return http.StatusInternalServerError
	}
	return 0
}

// backoffSaid is the back-off a Degraded message says.
var backoffSaid = regexp.MustCompile(`; retrying in (\S+), and nothing was deleted$`)

// TestRetryAfterFailedApplies (scenario l): with the handler DaemonSet's
// apply refused, and only that, CNO retries kubernetes-nmstate on its own,
// with the back-off its conditions say, until the failure grace ends and
// KubernetesNMStateDegraded turns True; CNO's own Degraded stays False. Once
// the fault ends, the next try clears it. The reconciles during the fault
// are counted from CNO's log: one ConfigMap change starts them, so without
// the requeue there would be one, and the next only at the 3-minute resync.
func TestRetryAfterFailedApplies(t *testing.T) {
	e, _, _ := deployedOnBareMetal(t, options{})
	var tries []time.Duration
	var began time.Time
	mark := len(e.cno.Log())
	p := poll(250*time.Millisecond, func() bool {
		for n := strings.Count(e.cno.Log()[mark:], reconcileBegins); len(tries) < n; {
			if began.IsZero() {
				began = time.Now()
			}
			tries = append(tries, time.Since(began))
		}
		return false
	})
	e.proxy.SetFault(failHandlerApply)
	e.touchCNO()

	prog := e.waitCondition(time.Minute, nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRetrying)
	t.Logf("%s: %s", nmstate.ConditionProgressing, prog.Message)
	assert.Regexp(t, `^retrying in \S+ after: could not apply \(apps/v1, Kind=DaemonSet\) `+nmstate.Namespace+"/"+nmstate.HandlerDaemonSet+": ",
		prog.Message, "the back-off, then CNO's apply error")
	deg := e.waitCondition(5*time.Minute, nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonFailed)
	e.proxy.SetFault(nil)
	ended := time.Now()
	t.Logf("%s: %s", nmstate.ConditionDegraded, deg.Message)
	cnoDegraded := e.operatorConditions()[operv1.OperatorStatusTypeDegraded]
	m := backoffSaid.FindStringSubmatch(deg.Message)
	require.NotNil(t, m, "Degraded does not say when the next try is")
	said, err := time.ParseDuration(m[1])
	require.NoError(t, err)

	e.waitCondition(4*time.Minute, nmstate.ConditionDegraded, operv1.ConditionFalse, "")
	recovered := time.Since(ended)
	p.stop()
	var during []time.Duration
	for _, at := range tries {
		if began.Add(at).Before(ended) {
			during = append(during, at.Round(100*time.Millisecond))
		}
	}
	t.Logf("reconciles began during the fault at %v; the fault's end to Degraded=False: %s; the back-off said: %s", during, recovered.Round(100*time.Millisecond), said)
	assert.NotEqual(t, operv1.ConditionTrue, cnoDegraded.Status, "CNO's own Degraded for kubernetes-nmstate's failure: %+v", cnoDegraded)
	assert.GreaterOrEqual(t, len(during), 3, "CNO did not retry kubernetes-nmstate by itself")
	e.waitCondition(time.Minute, nmstate.ConditionAvailable, operv1.ConditionTrue, "")
	if !t.Failed() {
		retried = &costreport.Retry{Tries: during, Said: said, Recovered: recovered}
	}
}
