package e2e

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
	"github.com/cno-nmstate/cno-nmstate/pkg/prune"
)

// TestRemoveAllAfterDowngrade: after a downgrade nothing manages
// kubernetes-nmstate (here: the host stopped, with the handler, webhook and
// a policy running). The user guide's one command, run as written (kubectl
// standing in for oc), removes every object kubernetes-nmstate deployed but
// the CRDs, and the policy in them stays.
func TestRemoveAllAfterDowngrade(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	_, stop := k.launchHost(k.cfg)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.createPolicy("bond0")
	policy := k.nncpObject("bond0").GetUID()
	require.NoError(t, stop())
	deployed := k.labelled()
	require.Contains(t, deployed, "DaemonSet "+nmstate.Namespace+"/"+nmstate.HandlerDaemonSet)

	section := guideSection(t, "## After a downgrade to a CNO without kubernetes-nmstate")
	out, err := k.shellWithOC(t.TempDir(), blockContaining(t, fencedBlocks(section, "sh"), "oc delete namespace,"))
	require.NoError(t, err, out)
	var left []string
	require.True(t, waitUntil(func() bool {
		left = k.labelled()
		return len(left) == len(nmstate.CRDNames())
	}), "left after the command: %v", left)
	for _, name := range nmstate.CRDNames() {
		assert.Contains(t, left, "CustomResourceDefinition "+name)
	}
	assert.Equal(t, policy, k.nncpObject("bond0").GetUID(), "the policy stays")
	t.Logf("the command removed %d of %d objects of kubernetes-nmstate; the CRDs and the policy stay", len(deployed)-len(left), len(deployed))
}

// labelled lists every object with the owner label, as "Kind namespace/name".
func (k *cluster) labelled() []string {
	k.t.Helper()
	owned, err := prune.Owned(k.ctx(), k.c)
	require.NoError(k.t, err)
	var out []string
	for _, obj := range owned {
		out = append(out, obj.Kind+" "+klog.KObj(&obj).String())
	}
	return out
}
