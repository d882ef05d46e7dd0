package e2e

import (
	"net/http"
	"sync/atomic"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// adoptBeforeDelete lets the host's first DELETE of one ServiceAccount
// through only after another controller adopted it: the race between the
// read that decided to prune and the delete, made to happen every time.
type adoptBeforeDelete struct {
	k       *cluster
	name    string
	owner   metav1.OwnerReference
	adopted atomic.Bool
	// refused is the status of the DELETE that followed the adoption.
	refused atomic.Int32
}

func (a *adoptBeforeDelete) wrap(rt http.RoundTripper) http.RoundTripper {
	return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		target := "/api/v1/namespaces/" + nmstate.Namespace + "/serviceaccounts/" + a.name
		if req.Method != http.MethodDelete || req.URL.Path != target || !a.adopted.CompareAndSwap(false, true) {
			return rt.RoundTrip(req)
		}
		sa := &corev1.ServiceAccount{}
		if err := a.k.c.Get(req.Context(), client.ObjectKey{Namespace: nmstate.Namespace, Name: a.name}, sa); err != nil {
			return nil, err
		}
		sa.OwnerReferences = append(sa.OwnerReferences, a.owner)
		if err := a.k.c.Update(req.Context(), sa); err != nil {
			return nil, err
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			a.refused.Store(int32(resp.StatusCode))
		}
		return resp, err
	})
}

// TestPruneDeletesOnlyWhatItDecidedOn: another controller adopts an object
// between the read that decided to prune it and the delete (the standalone
// operator takes over the same names). The delete carries the UID and
// resourceVersion it was decided on, so the API server refuses it, and the
// next pass releases the adopted object instead: it stays, with its owner.
// Without the preconditions the delete removes an object that is no longer
// the host's.
func TestPruneDeletesOnlyWhatItDecidedOn(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	race := &adoptBeforeDelete{k: k, name: "nmstate-old",
		owner: metav1.OwnerReference{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "nmstate-uid", Controller: ptr.To(true)}}
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = race.wrap
	k.runHost(cfg)
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)

	// Left behind by an older plugin version, applied as the host applies:
	// pruned, unless adopted.
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceAccount"))
	old.SetNamespace(nmstate.Namespace)
	old.SetName(race.name)
	old.SetLabels(map[string]string{nmstate.OwnerLabel: "0.0.1"})
	require.NoError(t, k.c.Apply(k.ctx(), client.ApplyConfigurationFromUnstructured(old), client.FieldOwner(controller.FieldManager)))

	// Read afresh on each poll, and only once the refused delete has
	// answered: the adoption starts before it.
	var sa *corev1.ServiceAccount
	released := waitUntil(func() bool {
		if race.refused.Load() == 0 {
			return false
		}
		sa = &corev1.ServiceAccount{}
		if !k.exists(sa, nmstate.Namespace, race.name) {
			return false
		}
		_, labelled := sa.Labels[nmstate.OwnerLabel]
		return !labelled
	})
	require.True(t, race.adopted.Load(), "the host never tried to prune %s", race.name)
	assert.Equal(t, int32(http.StatusConflict), race.refused.Load(), "the delete decided before the adoption was not refused")
	assert.True(t, released, "the adopted ServiceAccount is kept and loses the host's label; exists: %v, labels: %v",
		k.exists(&corev1.ServiceAccount{}, nmstate.Namespace, race.name), sa.Labels)
	require.Len(t, sa.OwnerReferences, 1, "its owner: %v", sa.OwnerReferences)
	assert.Equal(t, race.owner.UID, sa.OwnerReferences[0].UID, "and keeps its owner")
	assert.NotEqual(t, nmstate.ReasonFailed, k.conditions()[nmstate.ConditionDegraded].Reason, "a refused delete is retried, not Failed")
}
