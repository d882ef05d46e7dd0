// Package reconciles reads controller-runtime's own count of finished
// reconciles in this process: the bench and its host process wait on it to
// know that the host has reconciled, rather than on a state that may
// already hold from an earlier host.
package reconciles

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Synced is the result label of a reconcile of the host that applied every
// object and wrote its status: the only one that returns RequeueAfter.
const Synced = "requeue_after"

// Done is how many reconciles of this process's controllers ended with
// result, controller-runtime's label for it.
func Done(result string) (float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("reading the reconcile metrics: %w", err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n, nil
}
