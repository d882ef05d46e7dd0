package e2e

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestIdleOperatorKeepsHandler: what looks like the standalone operator but
// runs nothing does not make the host step aside. An NMState CR left
// behind, with the operator's Deployment scaled to 0, leaves every rendered
// object in place and the handler running, and Degraded names both with
// the commands that remove them. Scaled up to a replica that cannot be
// scheduled, the operator is starting: no Degraded, until it has been
// unavailable for RolloutHungAfter (the host's clock is moved ahead). Once
// both are removed, Degraded clears. Before, the CR alone made the host
// step aside and delete its running handler.
func TestIdleOperatorKeepsHandler(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), extraCRDs: []string{nmstatesCRD}})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	offset := k.startHostWithClock()
	k.waitOperandsSettled(6, 2)
	deployed := k.waitSnapshot(rendered(t, "", bareMetalHA))

	operator := k.createOperatorDeployment(t, "e2e-olm", 0)
	k.createNMState(t)
	var degraded operv1.OperatorCondition
	require.True(t, waitUntil(func() bool {
		degraded = k.conditions()[nmstate.ConditionDegraded]
		return degraded.Reason == nmstate.ReasonOtherManagerNotRunning &&
			strings.Contains(degraded.Message, "operator Deployment e2e-olm/nmstate-operator is scaled to 0 and NMState CR nmstate has no running operator")
	}), "Degraded never named the idle operator and its CR: %+v", degraded)
	assert.Equal(t, operv1.ConditionTrue, degraded.Status)
	assert.Contains(t, degraded.Message, "oc delete nmstates nmstate")
	// Written with Degraded, by the reconcile that pruned nothing.
	assert.Equal(t, nmstate.ReasonPlatformDefault, k.conditions()[nmstate.ConditionAvailable].Reason)
	assert.Empty(t, k.lost(deployed), "objects removed for an operator that runs nothing")
	assert.Len(t, k.livePods(nmstate.HandlerDaemonSet), 6)

	// One replica that no node takes: starting, not reported yet.
	require.NoError(t, k.c.Patch(k.ctx(), operator, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"replicas":1,"template":{"spec":{"nodeSelector":{"e2e.example.com/nowhere":"true"}}}}}`))))
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	require.True(t, k.exists(operator, operator.Namespace, operator.Name))
	assert.Zero(t, operator.Status.AvailableReplicas)
	offset.Store(int64(nmstate.RolloutHungAfter + time.Minute))
	degraded = k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonOtherManagerNotRunning)
	assert.Contains(t, degraded.Message, "operator Deployment e2e-olm/nmstate-operator has been down since ")
	assert.Empty(t, k.lost(deployed), "objects removed for an operator that runs nothing")

	out, err := k.kubectl("delete", "nmstates", "nmstate")
	require.NoError(t, err, out)
	require.NoError(t, k.c.Delete(k.ctx(), operator))
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	assert.Empty(t, k.lost(deployed))
}

// TestOperatorWatched: the host sees the standalone operator come and go
// from its watches, not from its recheck, which is set to 10 minutes here:
// the NMState CRD installed after the host started, then a CR and an
// available operator Deployment, make it step aside within the wait; the
// Deployment scaled to 0 makes it deploy its handler again, with Degraded
// naming the operator. No controller runs in this cluster: the test
// writes the Deployment's status as its controller would.
func TestOperatorWatched(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost(func(o *controller.Options) { o.RecheckInterval = 10 * time.Minute })
	handler := &appsv1.DaemonSet{}
	k.waitExists(handler, nmstate.Namespace, nmstate.HandlerDaemonSet)

	out, err := k.kubectl("apply", "-f", nmstatesCRD)
	require.NoError(t, err, out)
	operator := k.createOperatorDeployment(t, "e2e-olm", 1)
	k.markAvailable(t, operator)
	k.createNMState(t)
	start := time.Now()
	available := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	t.Logf("the host stepped aside %s after the NMState CR was created", time.Since(start).Round(time.Millisecond))
	assert.Contains(t, available.Message, "(NMState CR nmstate)")
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)

	require.NoError(t, k.c.Patch(k.ctx(), operator, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`))))
	operator.Status = appsv1.DeploymentStatus{ObservedGeneration: operator.Generation}
	require.NoError(t, k.c.Status().Update(k.ctx(), operator))
	start = time.Now()
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonOtherManagerNotRunning)
	t.Logf("the host took over again %s after the operator was scaled to 0", time.Since(start).Round(time.Millisecond))
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	assert.NotEqual(t, nmstate.ReasonManagedElsewhere, k.conditions()[nmstate.ConditionAvailable].Reason)
}
