package e2e

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/clusterstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// The reads CNO's Bootstrap makes on every reconcile, against the real API
// server: the policy count is exact from one item and remainingItemCount,
// no list goes out without a limit, whatever the number of policies, and
// none asks discovery, though neither the NMState nor (at first) the
// policies' CRD is served: a REST mapper reloads discovery at each kind it
// does not know, and CNO's reloads all of it.
func TestClusterStateReadBounded(t *testing.T) {
	k := startCluster(t, clusterOption{auditLog: true})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)

	// Read's own requests, told apart in the audit log by their user agent.
	cfg := rest.CopyConfig(k.cfg)
	cfg.UserAgent = "clusterstate-read"
	var discovery atomic.Int32
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if devcluster.IsDiscovery(req.URL.Path) {
				discovery.Add(1)
			}
			return next.RoundTrip(req)
		})
	}
	reader := k.clientFor(cfg)
	resources, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	readers := clusterstate.Readers{Workloads: reader, Live: reader, Resources: resources}
	// The first read maps the built-in kinds it reads, once for the
	// client's life, as CNO's client has long done by the time it reads.
	require.NoError(t, clusterstate.Read(k.ctx(), readers).Err)
	discovery.Store(0)
	for _, n := range []int{0, 1, 2, 25} {
		for i := len(nncpNames(t, k)); i < n; i++ {
			p := nncp(t, "bond0")
			p.SetName(fmt.Sprintf("bond-%d", i))
			require.NoError(t, k.c.Create(k.ctx(), p))
		}
		state := clusterstate.Read(k.ctx(), readers)
		require.NoError(t, state.Err)
		assert.Equal(t, n, state.Policies, "policies counted")
		assert.True(t, state.WorkloadsKnown)
		assert.NotNil(t, state.Handler, "the host's handler DaemonSet")
		assert.Empty(t, state.Other.ManagedBy)
	}

	assert.Zero(t, discovery.Load(), "discovery requests made by Read")

	events, err := readAudit(k.dc.AuditLog)
	require.NoError(t, err)
	lists := 0
	for _, e := range events {
		if e.UserAgent != cfg.UserAgent || e.Verb != "list" {
			continue
		}
		lists++
		assert.Contains(t, e.RequestURI, "limit=", "an unbounded list: %s", e.RequestURI)
	}
	// Each of the five Reads lists NMState CRs (a 404 here, which the audit
	// log records too), policies, operator Deployments, handler DaemonSets
	// and the plugin's ServiceAccounts.
	assert.Equal(t, 5*5, lists, "lists made by Read")
}

// A host started beside a CNO that embeds the plugin writes nothing: CNO's
// status manager owns the KubernetesNMState* conditions.
func TestHostStandsByBesideEmbeddingCNO(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	// What CNO's status manager applies (its field manager, from
	// pkg/controller/statusmanager at 2a6a57fef).
	network := &unstructured.Unstructured{}
	network.SetGroupVersionKind(operv1.GroupVersion.WithKind("Network"))
	network.SetName("cluster")
	require.NoError(t, unstructured.SetNestedSlice(network.Object, []any{map[string]any{
		"type": nmstate.ConditionAvailable, "status": "True", "reason": nmstate.ReasonPlatformDefault,
		"lastTransitionTime": "2026-12-04T12:00:00Z",
	}}, "status", "conditions"))
	require.NoError(t, k.c.Status().Apply(k.ctx(), client.ApplyConfigurationFromUnstructured(network),
		client.FieldOwner("cluster-network-operator/status-manager"), client.ForceOwnership))

	// Rechecks every 100 ms; twenty reconciles that stood by, counted in
	// the host's log, where a host that does not stand by creates the
	// DaemonSet within the first.
	logs := &logLines{}
	k.hostLogger = logs.logger()
	k.startHost(func(o *controller.Options) { o.RecheckInterval = 100 * time.Millisecond })
	var stoodBy int
	require.True(t, waitUntil(func() bool {
		stoodBy = len(logs.matching("standing by"))
		return stoodBy >= 20
	}), "the host stood by %d times, not 20", stoodBy)
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet), "the host applied beside CNO")
	assert.Len(t, k.conditions(), 1, "the host wrote conditions beside CNO")
}
