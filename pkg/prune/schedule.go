package prune

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// Timeout bounds one pass of Schedule.Run: CNO runs it in its single
// operconfig worker, so a slow API server must not hold up the rest of its
// work for longer.
const Timeout = 10 * time.Second

// Schedule runs Prune for a consumer that lists from the API server, not
// from a cache (CNO): a pass lists every prunable kind, so it runs only when
// something may be left to prune, and an idle reconcile lists nothing. A
// pass is due
//   - the first time a process renders kubernetes-nmstate or finds it
//     installed: a previous process, or version, may have deployed what this
//     one does not render;
//   - whenever the rendered objects change;
//   - after a pass that failed or kept something for later.
//
// The zero Schedule is ready to use.
type Schedule struct {
	mu sync.Mutex
	// ran: a pass has run in this process. settled: the last one left
	// nothing behind, and last is what it was for.
	ran, settled bool
	last         []string
}

// Run prunes what res no longer renders, if a pass is due. installed is
// nmstate.State.Installed: while neither it nor res says kubernetes-nmstate
// was ever deployed, nothing is read. Call it only after every object of res
// was applied; nothing is pruned while res.Err is set.
func (s *Schedule) Run(ctx context.Context, c client.Client, res nmstate.Result, installed bool, opts Options) error {
	if res.Err != nil {
		return nil
	}
	rendered := identities(res.Objects)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.ran && !installed && len(rendered) == 0:
		return nil // never deployed: nothing to look for
	case s.settled && slices.Equal(s.last, rendered):
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	pending, err := Prune(ctx, c, res.Objects, res.WorkloadsRemain, opts)
	s.ran, s.settled, s.last = true, err == nil && !pending, rendered
	return err
}

// identities are objs' identities, sorted.
func identities(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, obj := range objs {
		out = append(out, obj.GroupVersionKind().GroupKind().String()+"/"+obj.GetNamespace()+"/"+obj.GetName())
	}
	slices.Sort(out)
	return out
}
