package nmstate

import (
	"time"

	operv1 "github.com/openshift/api/operator/v1"
)

// DefaultFailureGrace is how long an API error is retried before it is
// reported as Degraded, as CNO's status manager waits before it reports
// its own errors (MaybeSetDegraded).
const DefaultFailureGrace = 2 * time.Minute

// DefaultRetryBase and DefaultRetryMax bound the back-off between tries of
// a failed sync (Reporter.RetryAfter): the first try after 10 seconds, then
// twice as long each time, and at most CNO's 3-minute resync period, after
// which CNO reconciles anyway.
const (
	DefaultRetryBase = 10 * time.Second
	DefaultRetryMax  = 3 * time.Minute
)

// Reporter turns each sync's outcome into the KubernetesNMState* conditions
// with the failure grace, and again whenever the workloads change between
// syncs. CNO's status manager and the host each keep one: the grace and the
// conditions are the same code in both. It is not safe for concurrent use;
// its owner's lock guards it. A restart starts a new grace, which at worst
// reports a lasting failure later.
type Reporter struct {
	// Grace is DefaultFailureGrace when zero.
	Grace time.Duration
	// RetryBase is the back-off after the first failed sync of a run,
	// doubled after each further one up to RetryMax; DefaultRetryBase and
	// DefaultRetryMax when zero. The conditions say it, so it must be the
	// caller's: CNO requeues after RetryAfter, and the host sets them to
	// its rate limiter's.
	RetryBase, RetryMax time.Duration

	failingSince time.Time
	failures     int
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
	if retryable(err) {
		r.failures++
	} else {
		r.failures = 0
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

// RetryAfter is how long after the last sync the caller tries again: zero
// when it succeeded, or failed for a bad input, which only an edit (an
// event the caller watches) fixes.
func (r *Reporter) RetryAfter() time.Duration {
	if r.failures == 0 {
		return 0
	}
	base, most := r.RetryBase, r.RetryMax
	if base == 0 {
		base = DefaultRetryBase
	}
	if most == 0 {
		most = DefaultRetryMax
	}
	d := base
	for range r.failures - 1 {
		if d >= most {
			break
		}
		d *= 2
	}
	return min(d, most)
}

func (r *Reporter) conditions(o Observed) []operv1.OperatorCondition {
	grace := r.Grace
	if grace == 0 {
		grace = DefaultFailureGrace
	}
	o.Retrying = retryable(r.err) && o.Now.Sub(r.failingSince) < grace
	o.RetryAfter = r.RetryAfter()
	return conditionsFor(r.decision, r.err, o)
}
