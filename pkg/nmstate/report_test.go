package nmstate

import (
	"errors"
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func reasons(conds []operv1.OperatorCondition) map[string]string {
	out := map[string]string{}
	for _, c := range conds {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

// A run of API errors is Retrying within the grace and Degraded after it;
// a success ends the run; an input error is Degraded at once.
func TestReporterGrace(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	enabled := decide(Config{}, haCluster)
	apiErr := errors.New("the server is currently unable to handle the request")
	badInput := &InputError{Reason: ReasonInvalidConfig, Err: errors.New(`spec.kubernetesNMState.mode is "enabled"`)}
	running := Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2)}
	type step struct {
		after    time.Duration
		err      error
		degraded string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "an API error within the grace", steps: []step{
			{0, apiErr, "False/Retrying"}, {time.Minute, apiErr, "False/Retrying"}, {119 * time.Second, apiErr, "False/Retrying"}}},
		{name: "an API error past the grace", steps: []step{
			{0, apiErr, "False/Retrying"}, {2 * time.Minute, apiErr, "True/Failed"}}},
		{name: "a success ends the run", steps: []step{
			{0, apiErr, "False/Retrying"}, {time.Minute, nil, "False/AsExpected"}, {2 * time.Minute, apiErr, "False/Retrying"},
			{3 * time.Minute, apiErr, "False/Retrying"}, {4 * time.Minute, apiErr, "True/Failed"}}},
		{name: "an input error at once", steps: []step{{0, badInput, "True/InvalidConfig"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reporter{}
			for i, s := range tt.steps {
				o := running
				o.Now = start.Add(s.after)
				d := enabled
				if s.err != nil {
					d = Decision{}
				}
				assert.Equal(t, s.degraded, reasons(r.Sync(d, s.err, o))[ConditionDegraded], "step %d", i)
			}
		})
	}
}

// The back-off doubles with each failed sync of a run up to its ceiling,
// starts again after a success, and is zero for a bad input, which only an
// edit fixes; the conditions say it.
func TestReporterRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	apiErr := errors.New("the server is currently unable to handle the request")
	badInput := &InputError{Reason: ReasonInvalidConfig, Err: errors.New(`spec.kubernetesNMState.mode is "enabled"`)}
	running := Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now}
	tests := []struct {
		name     string
		reporter Reporter
		errs     []error
		want     []time.Duration
	}{
		{name: "CNO's: from 10s, doubled, at most its resync period", errs: []error{apiErr, apiErr, apiErr, apiErr, apiErr, apiErr, apiErr},
			want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 3 * time.Minute, 3 * time.Minute}},
		{name: "a success starts again", errs: []error{apiErr, apiErr, nil, apiErr},
			want: []time.Duration{10 * time.Second, 20 * time.Second, 0, 10 * time.Second}},
		{name: "a bad input is not retried", errs: []error{apiErr, badInput, apiErr},
			want: []time.Duration{10 * time.Second, 0, 10 * time.Second}},
		{name: "the host's limiter's", reporter: Reporter{RetryBase: 100 * time.Millisecond, RetryMax: 2 * time.Second},
			errs: []error{apiErr, apiErr, apiErr, apiErr, apiErr, apiErr},
			want: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second}},
		{name: "a ceiling that is no doubling of the base", reporter: Reporter{RetryBase: 3 * time.Second, RetryMax: 10 * time.Second},
			errs: []error{apiErr, apiErr, apiErr, apiErr}, want: []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.reporter
			for i, err := range tt.errs {
				conds := r.Sync(Decision{}, err, running)
				assert.Equal(t, tt.want[i], r.RetryAfter(), "after sync %d", i)
				if err == apiErr {
					assert.Contains(t, conds[1].Message, "retrying in "+tt.want[i].String()+" after: ", "sync %d", i)
				}
			}
		})
	}
}

// Past the grace, Degraded says when the next try is.
func TestReporterDegradedSaysNextTry(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	r := &Reporter{}
	var conds []operv1.OperatorCondition
	for i, at := range []time.Duration{0, 10 * time.Second, 30 * time.Second, 70 * time.Second, 150 * time.Second} {
		conds = r.Sync(Decision{}, errors.New("conflict"), Observed{WorkloadsKnown: true, Now: now.Add(at)})
		if i < 4 {
			assert.Equal(t, "False/Retrying", reasons(conds)[ConditionDegraded], "try %d", i)
		}
	}
	assert.Equal(t, "True/Failed", reasons(conds)[ConditionDegraded])
	assert.Equal(t, "conflict; retrying in 2m40s, and nothing was deleted", conds[2].Message)
}

// Refresh follows the workloads under the last sync's outcome and does not
// end a run of failures.
func TestReporterRefresh(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	r := &Reporter{Grace: time.Minute}
	_, ok := r.Refresh(Observed{Now: now})
	assert.False(t, ok, "nothing to report before the first sync")

	r.Sync(decide(Config{}, haCluster), nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 0), Webhook: webhook(2, 2, 2), Now: now})
	conds, ok := r.Refresh(Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now.Add(time.Second)})
	require.True(t, ok)
	assert.Equal(t, "True/PlatformDefault", reasons(conds)[ConditionAvailable])

	r.Sync(Decision{}, errors.New("conflict"), Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now.Add(2 * time.Second)})
	assert.True(t, r.Failing())
	conds, _ = r.Refresh(Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now.Add(time.Minute + 2*time.Second)})
	assert.Equal(t, "True/Failed", reasons(conds)[ConditionDegraded], "the grace runs on between syncs")
	assert.Equal(t, "True/KeptDeployed", reasons(conds)[ConditionAvailable])
}

// Workloads that could not be read keep what Available and Progressing said.
func TestConditionsWorkloadsUnknown(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	previous := []operv1.OperatorCondition{
		{Type: ConditionAvailable, Status: operv1.ConditionTrue, Reason: ReasonPlatformDefault, Message: "handler ready on 3 of 3 nodes"},
		{Type: ConditionProgressing, Status: operv1.ConditionFalse, Reason: ReasonAsExpected, Message: "handler ready on 3 of 3 nodes"},
	}
	conds := conditionsFor(Decision{}, errors.New("reading the handler DaemonSet: timeout"), Observed{Previous: previous, Now: now, Retrying: true})
	assert.Equal(t, "True/PlatformDefault", reasons(conds)[ConditionAvailable])
	assert.Equal(t, "handler ready on 3 of 3 nodes", conds[0].Message)
	assert.Equal(t, "False/AsExpected", reasons(conds)[ConditionProgressing])
	assert.Equal(t, "False/Retrying", reasons(conds)[ConditionDegraded])

	conds = conditionsFor(Decision{}, errors.New("timeout"), Observed{Now: now})
	assert.Equal(t, "Unknown/Retrying", reasons(conds)[ConditionAvailable], "nothing said before: Unknown, not \"not created\"")
	assert.Equal(t, "True/Failed", reasons(conds)[ConditionDegraded])
}
