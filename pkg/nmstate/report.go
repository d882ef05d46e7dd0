package nmstate

import (
	"errors"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
)

// DefaultFailureGrace is how long an API error is retried before it is
// reported as Degraded, as CNO's status manager waits before it reports
// its own errors (MaybeSetDegraded).
const DefaultFailureGrace = 2 * time.Minute

// Reporter turns each sync's outcome into the KubernetesNMState* conditions
// with the failure grace, and again whenever the workloads change between
// syncs. CNO's status manager and the host each keep one: the grace and the
// conditions are the same code in both. It is not safe for concurrent use;
// its owner's lock guards it. A restart starts a new grace, which at worst
// reports a lasting failure later.
type Reporter struct {
	// Grace is DefaultFailureGrace when zero.
	Grace time.Duration

	failingSince time.Time
	decision     Decision
	err          error
	synced       bool
}

// Sync records a sync: its decision, or the error that stopped it, and
// returns the conditions for what o observed. An input error (*InputError) is
// reported at once, as no retry can fix it; any other error only once a run
// of failed syncs has lasted Grace.
func (r *Reporter) Sync(d Decision, err error, o Observed) []operv1.OperatorCondition {
	if err == nil {
		r.failingSince = time.Time{}
	} else if r.failingSince.IsZero() {
		r.failingSince = o.Now
	}
	r.decision, r.err, r.synced = d, err, true
	return r.conditions(o)
}

// Refresh returns the conditions for newly observed workloads under the last
// sync's outcome, so that they follow a rollout between syncs. ok is false
// before the first Sync: there is no decision to report yet.
func (r *Reporter) Refresh(o Observed) (conds []operv1.OperatorCondition, ok bool) {
	if !r.synced {
		return nil, false
	}
	return r.conditions(o), true
}

// Failing reports whether the last sync failed.
func (r *Reporter) Failing() bool { return r.synced && r.err != nil }

func (r *Reporter) conditions(o Observed) []operv1.OperatorCondition {
	grace := r.Grace
	if grace == 0 {
		grace = DefaultFailureGrace
	}
	var inputErr *InputError
	o.Retrying = r.err != nil && !errors.As(r.err, &inputErr) && o.Now.Sub(r.failingSince) < grace
	return conditionsFor(r.decision, r.err, o)
}
