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

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestOtherHandlerOnNoNode (issue 20, item 3): another manager's handler
// DaemonSet whose node selector matches no node still keeps the host aside
// (never two handlers on a node), but the conditions now say that nobody
// runs a handler and the policies are unenforced, and mark it Degraded,
// until the real kube-controller-manager schedules that DaemonSet again.
// Before, they said only "managed by" and "your policies are kept".
func TestOtherHandlerOnNoNode(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	// A DaemonSet in another namespace is not watched: the recheck finds it.
	k.startHost(func(o *controller.Options) { o.RecheckInterval = time.Second })
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.createPolicy("bond0")

	nowhere := strings.Replace(cnaoHandler, "      hostNetwork: true\n",
		"      nodeSelector:\n        e2e.example.com/no-such-node: \"true\"\n      hostNetwork: true\n", 1)
	require.NotEqual(t, cnaoHandler, nowhere)
	out, err := k.kubectlApply(nowhere)
	require.NoError(t, err, out)

	d := k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonOtherHandlerNotRunning)
	assert.Contains(t, d.Message, "DaemonSet openshift-cnv/nmstate-handler runs on no node, so nobody runs a kubernetes-nmstate handler and 1 NodeNetworkConfigurationPolicy exists and is not enforced")
	a := k.conditions()[nmstate.ConditionAvailable]
	assert.Equal(t, nmstate.ReasonManagedElsewhere, a.Reason)
	assert.True(t, strings.HasPrefix(a.Message, "DaemonSet openshift-cnv/nmstate-handler runs on no node"), a.Message)
	assert.Contains(t, a.Message, "stop whoever deployed DaemonSet openshift-cnv/nmstate-handler from deploying it", "its manager's handover, not an OLM uninstall")
	assert.NotContains(t, a.Message, "uninstall the kubernetes-nmstate operator")
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)

	out, err = k.kubectl("-n", "openshift-cnv", "patch", "daemonset", "nmstate-handler", "--type", "json",
		"-p", `[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]`)
	require.NoError(t, err, out)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	a = k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	assert.NotContains(t, a.Message, "runs on no node")
	assert.False(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet), "two handlers")
}
