// Package costreport reports what the patch costs CNO, as test/cnoe2e's
// TestWhatThePatchCosts measures it on the real binaries: the summary lines
// hack/cno-e2e.sh ends with, and the section of docs/resource-budget.md it
// writes. Both come from one Figures value, so the doc shows exactly what a
// run measured. It has no build tag, so make test checks the doc's section
// against what it writes.
package costreport

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cno-nmstate/cno-nmstate/internal/docsection"
	"github.com/cno-nmstate/cno-nmstate/internal/quantile"
)

// BudgetDoc is the doc whose section hack/cno-e2e.sh writes, from the
// repository's root.
const BudgetDoc = "docs/resource-budget.md"

// Section lies between these two lines of BudgetDoc.
var Section = docsection.Markers{
	Begin: "<!-- begin: written by hack/cno-e2e.sh (TestWhatThePatchCosts); change test/cnoe2e/costreport, not this section -->",
	End:   "<!-- end: written by hack/cno-e2e.sh -->",
}

// verbs are the columns of the requests for kubernetes-nmstate.
var verbs = []string{"get", "list", "patch", "other"}

// Row is what one CNO binary, under one setting, sent in one idle
// reconcile: from a ConfigMap change in its namespace to the reconcile's
// end, watches left out.
type Row struct {
	// All is every request; NMState those for kubernetes-nmstate, by verb;
	// Discovery those to /api, /apis and their group versions.
	All, NMState, Discovery int
	ByVerb                  map[string]int
	// Bytes and NMStateBytes are the response bodies read.
	Bytes, NMStateBytes int64
}

// Figures are every figure TestWhatThePatchCosts measured.
type Figures struct {
	// Pristine is CNO 2a6a57fef; GateOff the patched CNO on the Default
	// feature set; Disabled with the gate on and spec.kubernetesNMState.mode
	// Disabled; On with the gate on, on by default on BareMetal.
	Pristine, GateOff, Disabled, On Row
	// IdleMinute counts, over the same idle minute of each process's life,
	// the requests of the pristine and the patched CNO on the Default
	// feature set, and Extra
	// the patched one's beyond the pristine one's, compared by verb and path.
	IdleMinutePristine, IdleMinutePatched, IdleMinuteExtra int
	// GateOffConditions counts KubernetesNMState* conditions on
	// network.operator and clusteroperator/network with the gate off.
	GateOffConditions int
	// LockHeld is, for each of a run of idle reconciles with
	// kubernetes-nmstate on, how long its calls held CNO's status lock, as
	// the patched CNO logs it.
	LockHeld []time.Duration
	// Retry is what TestRetryAfterFailedApplies measured.
	Retry Retry
}

// Retry is a fault of kubernetes-nmstate's applies alone, held until
// KubernetesNMStateDegraded turned True, and its end.
type Retry struct {
	// Tries are when CNO's reconciles began during the fault, from the
	// first.
	Tries []time.Duration
	// Said is the back-off KubernetesNMStateDegraded said as the fault
	// ended; Recovered the time from its end to Degraded=False.
	Said, Recovered time.Duration
}

// Summary is the lines hack/cno-e2e.sh prints before its PASS line.
func (f Figures) Summary() string {
	return fmt.Sprintf("cno_gate_off_extra_requests: %d\ncno_gate_off_nmstate_conditions: %d\n"+
		"cno_nmstate_discovery_requests_per_reconcile: %d\ncno_nmstate_requests_per_idle_reconcile: %d\n"+
		"cno_nmstate_status_lock_p50_ms: %.1f\ncno_nmstate_status_lock_p99_ms: %.1f\n"+
		"cno_nmstate_tries_during_fault: %d\ncno_nmstate_fault_end_to_not_degraded_seconds: %.1f\n",
		f.IdleMinuteExtra, f.GateOffConditions, f.On.Discovery-f.Pristine.Discovery, f.On.NMState,
		ms(quantile.Of(f.LockHeld, 0.50)), ms(quantile.Of(f.LockHeld, 0.99)), len(f.Retry.Tries), f.Retry.Recovered.Seconds())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// DocSection is the section of BudgetDoc, markers included.
func (f Figures) DocSection() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("%s", Section.Begin)
	w("One idle reconcile of each (from a ConfigMap change in CNO's namespace to")
	w("the reconcile's end, watches left out), through the request-recording proxy")
	w("in front of the binary, on the sample bare-metal cluster:")
	w("")
	w("| CNO | requests | for kubernetes-nmstate (%s) | discovery | KiB read | of them for kubernetes-nmstate |", strings.Join(verbs, ", "))
	w("| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range []struct {
		name string
		row  Row
	}{
		{"pristine 2a6a57fef", f.Pristine},
		{"patched, gate off (Default feature set)", f.GateOff},
		{"patched, gate on, `mode: Disabled`", f.Disabled},
		{"patched, gate on, on by default", f.On},
	} {
		var byVerb []string
		for _, v := range verbs {
			byVerb = append(byVerb, fmt.Sprint(r.row.ByVerb[v]))
		}
		w("| %s | %d | %d (%s) | %d | %.1f | %.1f |", r.name, r.row.All, r.row.NMState, strings.Join(byVerb, ", "),
			r.row.Discovery, float64(r.row.Bytes)/1024, float64(r.row.NMStateBytes)/1024)
	}
	w("")
	w("With the gate off, over the third minute of each process, the pristine CNO sent %d", f.IdleMinutePristine)
	w("requests and the patched one %d; %d of the patched one's were of a verb and path", f.IdleMinutePatched, f.IdleMinuteExtra)
	w("the pristine one never sent, and %d `KubernetesNMState*` conditions were written.", f.GateOffConditions)
	w("")
	w("Over %d idle reconciles with kubernetes-nmstate on, its calls held CNO's status", len(f.LockHeld))
	w("lock for %.1f ms per reconcile at the median and %.1f ms at the 99th percentile", ms(quantile.Of(f.LockHeld, 0.50)), ms(quantile.Of(f.LockHeld, 0.99)))
	w("(nearest rank: with fewer than 100 reconciles, the longest), as the patched")
	w("CNO logs it: the longest any other status update of CNO's waited on it.")
	w("")
	var tries []string
	for _, d := range f.Retry.Tries {
		tries = append(tries, fmt.Sprintf("%.1f", d.Seconds()))
	}
	w("With the handler DaemonSet's apply refused (the proxy answers 500), and")
	w("nothing else failing, CNO tried at %s s, and", strings.Join(tries, ", "))
	w("`KubernetesNMStateDegraded` turned True saying `retrying in %s`. From the", f.Retry.Said)
	w("fault's end to `KubernetesNMStateDegraded=False`: %.1f s, %.2f of the", f.Retry.Recovered.Seconds(), f.Retry.Recovered.Seconds()/f.Retry.Said.Seconds())
	w("back-off it said. The back-off starts at 10 s and doubles up to CNO's")
	w("3-minute resync period, at which CNO reconciles anyway.")
	w("")
	w("```")
	b.WriteString(f.Summary())
	w("```")
	w("%s", Section.End)
	return b.String()
}

// RequestKey is a request's verb and path, names included, for the
// comparison of two binaries' requests.
func RequestKey(method, path string) string { return method + " " + path }

// ExtraRequests counts the requests of patched whose key pristine never
// made, and lists those keys. Counts of a key both made are not compared:
// CNO's own timers (the network diagnostics' checks, retries of what the dev
// cluster lacks) fire once more or less in a minute as their phase falls,
// while whatever the patch sent for kubernetes-nmstate has paths of its own
// (its namespace, the nmstate.io group, the handler DaemonSets in every
// namespace, its CRD).
func ExtraRequests(pristine, patched map[string]int) (int, []string) {
	n := 0
	var keys []string
	for k, c := range patched {
		if pristine[k] == 0 {
			n += c
			keys = append(keys, fmt.Sprintf("%s (%d)", k, c))
		}
	}
	sort.Strings(keys)
	return n, keys
}

// VerbOf is a request's verb as the table shows it.
func VerbOf(method, path string) string {
	switch method {
	case "GET":
		// A collection's path ends with its resource: an even number of
		// segments after /api/v1 or /apis/<group>/<version>.
		parts := strings.Split(strings.Trim(path, "/"), "/")
		rest := len(parts) - 2
		if parts[0] == "apis" {
			rest--
		}
		if rest%2 == 1 {
			return "list"
		}
		return "get"
	case "PATCH":
		return "patch"
	}
	return "other"
}
