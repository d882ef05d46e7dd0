package e2e

import (
	"context"
	"maps"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// resourceVersions maps every rendered object, and the Network, to its
// resourceVersion on the server.
func resourceVersions(t *testing.T, k *cluster) map[string]string {
	out, err := devcluster.ResourceVersions(k.ctx(), k.c, rendered(t, "", bareMetalHA))
	require.NoError(t, err)
	out["Network/cluster"] = k.network().GetResourceVersion()
	return out
}

// After convergence, reconciles with nothing changed send no write at all,
// and the host never reads Nodes, Pods or NodeNetworkStates.
func TestIdleReconcilesWriteNothing(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	counter := &devcluster.RequestCounter{}
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = counter.Wrap
	r := k.startHostWith(cfg)
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	// One reconcile to settle what the controllers' status writes changed.
	_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster"}})
	require.NoError(t, err)

	// Counted from the host's start: its informers' initial LIST and WATCH
	// are the only traffic a Node or Pod informer would make.
	assert.Empty(t, counter.Matching(growsWithCluster...), "the host must not read what grows with the cluster, start-up included")
	assert.NotEmpty(t, counter.Matching("/daemonsets"), "the counter saw the host's own informers start")

	// Idle is counted, not timed: the controllers may still write the
	// workloads' status after the conditions settle, and the host rightly
	// re-applies what someone else wrote, also from a watch event that
	// arrives in the next batch. So batches of 100 reconciles run until
	// two in a row change no object; the second is the one measured.
	var mutating, quiet int
	var requests []string
	before := resourceVersions(t, k)
	require.True(t, waitUntil(func() bool {
		counter.Reset()
		for range 100 {
			_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster"}})
			require.NoError(t, err)
		}
		after := resourceVersions(t, k)
		if maps.Equal(before, after) {
			quiet++
		} else {
			quiet = 0
		}
		before = after
		mutating, requests = counter.Mutating(), counter.Matching("/")
		return quiet >= 2
	}), "objects changed in every batch of 100 reconciles: a host that writes is never idle; last batch's requests: %v", requests)
	assert.Equal(t, 0, mutating, "mutating requests in 100 idle reconciles: %v", requests)
	assert.Empty(t, counter.Matching(growsWithCluster...), "the host must not read what grows with the cluster")
}

// growsWithCluster are the API paths of what grows with the node count (not
// the nmstate.io CRDs themselves, which the host applies).
var growsWithCluster = []string{"/api/v1/nodes", "/api/v1/pods", "/pods?", "/pods/",
	"nmstate.io/v1/nodenetworkstates", "nmstate.io/v1beta1/nodenetworkstates",
	"nmstate.io/v1/nodenetworkconfigurationenactments", "nmstate.io/v1beta1/nodenetworkconfigurationenactments"}
