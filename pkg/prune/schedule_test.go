package prune

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// A pass of Schedule.Run lists every prunable kind; it must run when
// something may be left to prune and only then.
func TestScheduleRunsOnlyWhenDue(t *testing.T) {
	handler := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("DaemonSet")
		u.SetNamespace(nmstate.Namespace)
		u.SetName(nmstate.HandlerDaemonSet)
		return u
	}
	on := nmstate.Result{Objects: []*unstructured.Unstructured{handler()}}
	off := nmstate.Result{}
	type call struct {
		res       nmstate.Result
		installed bool
		failList  bool
		// lists: whether this call made a pass.
		lists bool
	}
	for name, calls := range map[string][]call{
		"never deployed: no read":                        {{res: off}, {res: off}},
		"installed: once per process, then not again":    {{res: off, installed: true, lists: true}, {res: off, installed: true}},
		"rendered: once, then only when it changes":      {{res: on, installed: true, lists: true}, {res: on, installed: true}, {res: off, installed: true, lists: true}, {res: off, installed: true}},
		"a failed pass is run again":                     {{res: on, failList: true, lists: true}, {res: on, lists: true}, {res: on}},
		"nothing while the render failed":                {{res: nmstate.Result{Err: errors.New("bad input")}, installed: true}},
		"a render that failed leaves the schedule as is": {{res: on, lists: true}, {res: nmstate.Result{Err: errors.New("read failed")}}, {res: on}},
	} {
		t.Run(name, func(t *testing.T) {
			var s Schedule
			for i, c := range calls {
				lists := 0
				cl := fake.NewClientBuilder().WithScheme(newScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
					List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
						lists++
						if c.failList {
							return errors.New("API server unavailable")
						}
						return cl.List(ctx, list, opts...)
					},
				}).Build()
				err := s.Run(context.Background(), cl, c.res, c.installed, Options{})
				if c.failList {
					require.Error(t, err, "call %d", i)
				} else {
					require.NoError(t, err, "call %d", i)
				}
				assert.Equal(t, c.lists, lists > 0, "call %d: listed %d kinds", i, lists)
			}
		})
	}
}

// An account kept while the workloads' pods remain leaves the pass
// unsettled: the next call looks again, and deletes it once they are gone.
func TestScheduleRunsAgainWhileAccountsWait(t *testing.T) {
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet,
		Labels: map[string]string{nmstate.OwnerLabel: nmstate.PluginVersion}}}
	cl := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(account).Build()
	var s Schedule
	require.NoError(t, s.Run(context.Background(), cl, nmstate.Result{WorkloadsRemain: true}, true, Options{}))
	require.NoError(t, cl.Get(context.Background(), client.ObjectKeyFromObject(account), &corev1.ServiceAccount{}), "kept while pods remain")
	require.NoError(t, s.Run(context.Background(), cl, nmstate.Result{}, true, Options{}))
	err := cl.Get(context.Background(), client.ObjectKeyFromObject(account), &corev1.ServiceAccount{})
	assert.True(t, client.IgnoreNotFound(err) == nil && err != nil, "pruned once the pods are gone: %v", err)
}
