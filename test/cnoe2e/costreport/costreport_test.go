package costreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cno-nmstate/cno-nmstate/internal/docsection"
)

func sample() Figures {
	row := Row{All: 1, NMState: 1, Discovery: 1, Bytes: 1, NMStateBytes: 1, ByVerb: map[string]int{"get": 1}}
	return Figures{Pristine: row, GateOff: row, Disabled: row, On: row, IdleMinutePristine: 1, IdleMinutePatched: 1,
		LockHeld: []time.Duration{time.Millisecond},
		// Degraded comes past the 2-minute grace, when the back-off is over a
		// minute: a Said of minutes and seconds.
		Retry: Retry{Tries: []time.Duration{0, time.Second}, Said: 160 * time.Second, Recovered: time.Second}}
}

// The doc's section is what a run of hack/cno-e2e.sh writes, but for its
// figures: no row or line was added or edited by hand.
func TestCostSectionIsGenerated(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("../../..", BudgetDoc))
	require.NoError(t, err)
	got, err := Section.Section(doc)
	require.NoError(t, err, BudgetDoc)
	want := sample().DocSection()
	require.NotContains(t, want, "%!", "a bad format verb")
	if diff := docsection.SameButFigures(got, want); diff != "" {
		t.Fatalf("%s's section written by hack/cno-e2e.sh: %s\nrun hack/cno-e2e.sh, or change test/cnoe2e/costreport rather than the doc", BudgetDoc, diff)
	}
}

// The summary lines are the ones hack/cno-e2e.sh prints before its PASS
// line, with the figures the issue asks for.
func TestCostSummary(t *testing.T) {
	f := sample()
	f.IdleMinuteExtra, f.GateOffConditions = 2, 3
	f.Pristine.Discovery, f.On.Discovery, f.On.NMState = 4, 4, 44
	f.LockHeld = []time.Duration{3 * time.Millisecond, 1500 * time.Microsecond, 40 * time.Millisecond, 2 * time.Millisecond}
	f.Retry = Retry{Tries: []time.Duration{0, 10 * time.Second, 30 * time.Second}, Said: 40 * time.Second, Recovered: 39250 * time.Millisecond}
	assert.Equal(t, "cno_gate_off_extra_requests: 2\ncno_gate_off_nmstate_conditions: 3\n"+
		"cno_nmstate_discovery_requests_per_reconcile: 0\ncno_nmstate_requests_per_idle_reconcile: 44\n"+
		"cno_nmstate_status_lock_p50_ms: 3.0\ncno_nmstate_status_lock_p99_ms: 40.0\n"+
		"cno_nmstate_tries_during_fault: 3\ncno_nmstate_fault_end_to_not_degraded_seconds: 39.2\n", f.Summary())
}

func TestExtraRequests(t *testing.T) {
	n, keys := ExtraRequests(map[string]int{"GET /a": 2, "PUT /b": 1}, map[string]int{"GET /a": 3, "PUT /b": 1, "GET /c": 2, "PATCH /a": 1})
	assert.Equal(t, 3, n)
	assert.Equal(t, []string{"GET /c (2)", "PATCH /a (1)"}, keys)
	n, _ = ExtraRequests(map[string]int{"GET /a": 2}, map[string]int{"GET /a": 1})
	assert.Zero(t, n, "fewer is not more")
}

func TestVerbOf(t *testing.T) {
	for _, tt := range []struct{ method, path, want string }{
		{"GET", "/apis/apps/v1/namespaces/openshift-nmstate/daemonsets/nmstate-handler", "get"},
		{"GET", "/apis/apps/v1/daemonsets", "list"},
		{"GET", "/apis/nmstate.io/v1/nmstates", "list"},
		{"GET", "/api/v1/namespaces/openshift-nmstate/serviceaccounts", "list"},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodenetworkconfigurationpolicies.nmstate.io", "get"},
		{"PATCH", "/api/v1/namespaces/openshift-nmstate", "patch"},
		{"DELETE", "/api/v1/namespaces/openshift-nmstate/serviceaccounts/x", "other"},
	} {
		assert.Equal(t, tt.want, VerbOf(tt.method, tt.path), strings.Join([]string{tt.method, tt.path}, " "))
	}
}
