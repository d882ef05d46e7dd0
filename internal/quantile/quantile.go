// Package quantile picks quantiles of measured durations, the one way make
// bench and hack/cno-e2e.sh report them.
package quantile

import (
	"slices"
	"time"
)

// Of is the q-quantile of samples (q from 0 to 1): the sample nearest to
// rank q×(n−1) in ascending order, so with fewer than 100 samples the 0.99
// quantile is the highest. It is zero for no samples; samples is not
// changed.
func Of(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(samples))
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}
