package e2e

import (
	"context"
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
	out, err := devcluster.ResourceVersions(k.ctx(), k.c, rendered(t, nmstate.Config{}, bareMetalHA))
	require.NoError(t, err)
	out["Network/cluster"] = k.network().GetResourceVersion()
	return out
}

// After convergence, reconciles with nothing changed send no write at all,
// and the host never reads Nodes, Pods or NodeNetworkStates.
func TestIdleReconcilesWriteNothing(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	counter := &devcluster.RequestCounter{}
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = counter.Wrap
	r := k.startHostWith(cfg)
	k.reportRollout(3, 3)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	// One reconcile to settle what the rollout report changed.
	_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster"}})
	require.NoError(t, err)

	before := resourceVersions(t, k)
	counter.Reset()
	for i := 0; i < 100; i++ {
		_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster"}})
		require.NoError(t, err)
	}
	assert.Equal(t, 0, counter.Mutating(), "mutating requests in 100 idle reconciles: %v", counter.Matching("/"))
	assert.Equal(t, before, resourceVersions(t, k), "no object changed")
	assert.Empty(t, counter.Matching("/nodes", "/pods", "nodenetworkstates", "nodenetworkconfigurationenactments"),
		"the host must not read what grows with the cluster")
}
