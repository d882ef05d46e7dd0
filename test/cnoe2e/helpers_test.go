//go:build cnoe2e

package cnoe2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/prune"
)

// holdFinalizer is the tests' own finalizer: it keeps an object, and so
// what it stands for, there until the test lets it go.
const holdFinalizer = "cnoe2e.cno-nmstate.io/hold"

// object is one object of kubernetes-nmstate on the server.
type object struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

func (o object) String() string {
	return fmt.Sprintf("%s/%s %s/%s", o.gvk.Group, o.gvk.Kind, o.namespace, o.name)
}

// nmstateObjects are the objects of kubernetes-nmstate on the server (its
// owner label), with their UIDs: what CNO deployed for it. None of them may
// be among clusteroperator/network's related objects: a CNO downgraded to
// a version without kubernetes-nmstate would delete those.
func (e *env) nmstateObjects() map[object]types.UID {
	e.t.Helper()
	co := &configv1.ClusterOperator{}
	require.NoError(e.t, e.c.Get(e.ctx(), client.ObjectKey{Name: "network"}, co))
	related := map[string]bool{}
	for _, ref := range co.Status.RelatedObjects {
		related[ref.Group+"/"+ref.Namespace+"/"+ref.Name] = true
	}
	owned, err := prune.Owned(e.ctx(), e.c)
	require.NoError(e.t, err)
	out := map[object]types.UID{}
	for _, item := range owned {
		o := object{item.GroupVersionKind(), item.Namespace, item.Name}
		out[o] = item.UID
		if related[o.gvk.Group+"/"+item.Namespace+"/"+item.Name] {
			e.t.Errorf("%s is among CNO's related objects", o)
		}
	}
	return out
}

var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// missing lists the objects of want that are gone, being deleted, or were
// replaced (another UID), or could not be read. It never fails the test
// itself: the sampler calls it from a goroutine of its own.
func (e *env) missing(want map[object]types.UID) []string {
	var out []string
	for o, uid := range want {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		err := e.c.Get(e.ctx(), client.ObjectKey{Namespace: o.namespace, Name: o.name}, u)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, o.String()+" deleted")
		case err != nil:
			out = append(out, fmt.Sprintf("%s unreadable: %v", o, err))
		case u.GetDeletionTimestamp() != nil:
			out = append(out, o.String()+" being deleted")
		case u.GetUID() != uid:
			out = append(out, o.String()+" replaced")
		}
	}
	sort.Strings(out)
	return out
}

// cnoDeletes are the DELETE requests CNO sent.
func (e *env) cnoDeletes() []string {
	var out []string
	for _, r := range e.proxy.Requests() {
		if r.Method == http.MethodDelete {
			out = append(out, r.Path)
		}
	}
	return out
}

// poller runs a step in the background, at once and then on every tick of
// its interval, until the step returns true or stop is called.
type poller struct {
	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{} // closed when the polling has ended
}

func poll(every time.Duration, step func() (finished bool)) *poller {
	p := &poller{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for !step() {
			select {
			case <-p.stopCh:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// stop ends the polling, if it has not ended, and waits for the last step.
func (p *poller) stop() {
	p.stopOnce.Do(func() { close(p.stopCh) })
	<-p.done
}

// sampler checks, every second until stop, that every object of want is
// still there and that no KubernetesNMState* condition says something false
// while the handler runs (see falseClaims).
type sampler struct {
	mu       sync.Mutex
	samples  int
	problems []string
	poller   *poller
}

func (e *env) sample(want map[object]types.UID, graceFrom time.Time) *sampler {
	s := &sampler{}
	// Off the test's goroutine: nothing here may fail the test, so a
	// failed read is one more problem the sample reports.
	s.poller = poll(time.Second, func() bool {
		probs := e.missing(want)
		if conds, err := devcluster.Conditions(e.ctx(), e.c); err != nil {
			probs = append(probs, "the conditions unreadable: "+err.Error())
		} else {
			probs = append(probs, falseClaims(conds, graceFrom)...)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.samples++
		for _, p := range probs {
			s.problems = append(s.problems, time.Now().Format("15:04:05")+" "+p)
		}
		return false
	})
	return s
}

func (s *sampler) stop() (samples int, problems []string) {
	s.poller.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.problems
}

// falseClaims are what the conditions say that is false while the handler
// and webhook, deployed and available, keep running: Available not True, a
// message saying the workloads are missing or not available, or, within the
// two minutes of grace docs/troubleshooting.md promises for API errors
// (from graceFrom), Degraded True for anything but a bad input.
func falseClaims(conds map[string]operv1.OperatorCondition, graceFrom time.Time) []string {
	var out []string
	for _, typ := range []string{nmstate.ConditionAvailable, nmstate.ConditionProgressing, nmstate.ConditionDegraded} {
		c, ok := conds[typ]
		if !ok {
			out = append(out, typ+" missing")
			continue
		}
		for _, lie := range []string{"to be created", "no kubernetes-nmstate handler is available", "not deployed", "was deleted"} {
			if strings.Contains(c.Message, lie) {
				out = append(out, fmt.Sprintf("%s=%s/%s says %q: %q", typ, c.Status, c.Reason, lie, c.Message))
			}
		}
	}
	if a := conds[nmstate.ConditionAvailable]; a.Status != operv1.ConditionTrue {
		out = append(out, fmt.Sprintf("%s=%s/%s while the handler runs: %q", nmstate.ConditionAvailable, a.Status, a.Reason, a.Message))
	}
	if d := conds[nmstate.ConditionDegraded]; d.Status == operv1.ConditionTrue && d.Reason != nmstate.ReasonInvalidConfig &&
		!graceFrom.IsZero() && time.Since(graceFrom) < 2*time.Minute {
		out = append(out, fmt.Sprintf("%s=True/%s %s after the first fault, within the promised two-minute grace: %q",
			nmstate.ConditionDegraded, d.Reason, time.Since(graceFrom).Round(time.Second), d.Message))
	}
	return out
}

var (
	networkGVK          = controller.NetworkGVK
	nodeNetworkStateGVK = schema.GroupVersionKind{Group: "nmstate.io", Version: "v1beta1", Kind: "NodeNetworkState"}
)
