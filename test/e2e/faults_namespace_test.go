package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestFaultNamespaceDeleted: openshift-nmstate is deleted while enabled, and
// the real namespace controller empties it. While it terminates, the host's
// creates are refused; the conditions must still say what is there (the
// workloads are gone: not RollingOut, not AsExpected), each cause once and
// bounded. Then everything comes back in a new namespace, and nothing of the
// users' is lost.
//
// Both windows are made to last until the test has read the status written
// in them: a finalizer of the test's keeps the namespace terminating, and
// the host's apply of the Namespace is refused until the test has read a
// status that says both workloads are gone (otherwise the host may recreate
// them before it writes one, which is correct).
func TestFaultNamespaceDeleted(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	// An hour of grace: the errors are never Degraded within this test, so
	// only conditions written during the grace can show the change; the
	// host used to write none then.
	block := &namespaceApplyBlock{}
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = block.wrap
	k.startHostWith(cfg, func(o *controller.Options) { o.FailureGrace = time.Hour })
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.createPolicy("bond0")
	objs := rendered(t, "", bareMetalHA)
	before := k.waitSnapshot(objs)
	ns := &corev1.Namespace{}
	require.True(t, k.exists(ns, "", nmstate.Namespace))
	oldUID := ns.UID
	history := k.recordEvents(networkList(), &appsv1.DaemonSetList{}, &appsv1.DeploymentList{})

	// A finalizer of the test's keeps the emptied namespace terminating
	// until the test has read what the host says meanwhile.
	out, err := k.kubectl("patch", "namespace", nmstate.Namespace, "--type=merge", "-p", `{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`)
	require.NoError(t, err, out)
	block.refusing.Store(true)
	out, err = k.kubectl("delete", "namespace", nmstate.Namespace, "--wait=false")
	require.NoError(t, err, out)

	var progressing operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		progressing = k.conditions()[nmstate.ConditionProgressing]
		return progressing.Reason == nmstate.ReasonRetrying && strings.Contains(progressing.Message, "being terminated")
	}), "the conditions never said that the host retries creates in the terminating namespace: %+v", progressing)
	assert.NotContains(t, progressing.Message, "\n", "one line")
	lines := strings.Split(progressing.Message, "; ")
	assert.Equal(t, len(lines), sets.New(lines...).Len(), "each cause once: %s", progressing.Message)
	assert.LessOrEqual(t, len(progressing.Message), 1024+200, "bounded: %s", progressing.Message)
	out, err = k.kubectl("patch", "namespace", nmstate.Namespace, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	require.NoError(t, err, out)

	// Nothing can come back while the Namespace is refused: the host
	// reports what is there.
	gone := "waiting for the handler DaemonSet and webhook Deployment to be created"
	require.True(t, waitUntil(func() bool {
		progressing = k.conditions()[nmstate.ConditionProgressing]
		return strings.Contains(progressing.Message, gone)
	}), "the conditions never said that both workloads were gone; last Progressing: %+v", progressing)
	assert.Equal(t, nmstate.ReasonRetrying, progressing.Reason)
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.False(t, k.exists(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment))
	assert.Positive(t, block.refused.Load(), "the host never applied the Namespace while it was refused")
	block.refusing.Store(false)

	require.True(t, waitUntil(func() bool {
		return k.exists(ns, "", nmstate.Namespace) && ns.UID != oldUID && ns.DeletionTimestamp == nil
	}), "the host never recreated the namespace; last seen: UID %s (deleted %s), phase %s, deletion %v", ns.UID, oldUID, ns.Status.Phase, ns.DeletionTimestamp)
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	events := history.stop()

	// Only what lived in the namespace was recreated: the cluster-scoped
	// objects, the CRDs and the policy were never touched.
	for _, key := range k.lost(before) {
		inNamespace := strings.Contains(key, " "+nmstate.Namespace+"/") || strings.HasPrefix(key, "Namespace "+nmstate.Namespace+" ")
		assert.True(t, inNamespace, "a cluster-scoped object was lost: %s", key)
	}
	for _, crd := range nmstate.CRDNames() {
		assert.True(t, k.crdKept(crd), crd)
	}
	assert.Equal(t, []string{"bond0"}, nncpNames(t, k))

	// None was Degraded (the grace is an hour), and none written while
	// both workloads were gone said they were as expected; the one the
	// test read above is in etcd's history too.
	handler, webhook := true, true
	sawGone := false
	for _, e := range events {
		switch o := e.obj.(type) {
		case *appsv1.DaemonSet:
			handler = e.typ != "DELETED"
		case *appsv1.Deployment:
			webhook = e.typ != "DELETED"
		case *unstructured.Unstructured:
			conds := conditionsOf(t, o)
			assert.NotEqual(t, operv1.ConditionTrue, conds[nmstate.ConditionDegraded].Status, "Degraded within the grace: %+v", conds[nmstate.ConditionDegraded])
			p := conds[nmstate.ConditionProgressing]
			if !handler && !webhook {
				assert.NotEqual(t, nmstate.ReasonAsExpected, p.Reason, "a status written while both workloads were gone: %+v", p)
				sawGone = sawGone || strings.Contains(p.Message, gone)
			}
		}
	}
	assert.True(t, sawGone, "the status that said both workloads were gone is not in the watched history")
}

// holdFinalizer is the test's own finalizer on the namespace it deletes.
const holdFinalizer = "e2e.cno-nmstate.io/hold"

// namespaceApplyBlock refuses the host's applies of its Namespace, with the
// 503 an API server answers when it cannot serve, while refusing is set.
type namespaceApplyBlock struct {
	refusing atomic.Bool
	refused  atomic.Int32
}

func (b *namespaceApplyBlock) wrap(rt http.RoundTripper) http.RoundTripper {
	return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if b.refusing.Load() && req.Method == http.MethodPatch && req.URL.Path == "/api/v1/namespaces/"+nmstate.Namespace {
			b.refused.Add(1)
			return statusResponse(req, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, nil), nil
		}
		return rt.RoundTrip(req)
	})
}
