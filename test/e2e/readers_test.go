package e2e

import (
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	// readerUser is bound to OpenShift's cluster-reader and to nothing else.
	readerUser = "nmstate-e2e-reader"
	// viewerUser is bound cluster-wide to view, which the plugin does not
	// aggregate into.
	viewerUser = "nmstate-e2e-viewer"
)

// TestReadersClusterReader: a user bound to OpenShift's cluster-reader (the
// dev cluster's stand-in for the bootstrap role, filled by the real
// kube-controller-manager's clusterrole-aggregation controller) reads
// policies, enactments and states through the rendered
// nmstate-cluster-reader, as the real API server authorizes it, writes
// none of them, and still reads the policies kept after a disable. A user
// bound to view reads none of them.
func TestReadersClusterReader(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.SingleNode()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.SingleReplicaTopologyMode, configv1.SingleReplicaTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)

	for user, role := range map[string]string{readerUser: devcluster.ClusterReaderRole, viewerUser: "view"} {
		require.NoError(t, k.c.Create(k.ctx(), &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		}))
	}
	// One of each kind, so that every list has something to show. No
	// handler runs here, so the state and the enactment are the admin's.
	k.createPolicy("bond0")
	for _, obj := range []*unstructured.Unstructured{
		nmstateObject("v1beta1", "NodeNetworkState", "sno-0"),
		nmstateObject("v1beta1", "NodeNetworkConfigurationEnactment", "sno-0.bond0"),
	} {
		require.NoError(t, k.c.Create(k.ctx(), obj), "creating %s %s", obj.GetKind(), obj.GetName())
	}
	want := map[resource]string{nncps: "bond0", nnss: "sno-0", nnces: "sno-0.bond0"}

	// The aggregation controller copies the rules in a moment after the
	// host has created the role.
	aggregated := &rbacv1.ClusterRole{}
	require.True(t, waitUntil(func() bool {
		return k.exists(aggregated, "", devcluster.ClusterReaderRole) && slices.ContainsFunc(aggregated.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "nmstate.io")
		})
	}), "cluster-reader never got the nmstate.io rules; its rules: %v", aggregated.Rules)

	reader := k.clientFor(k.impersonating(readerUser))
	t.Run("cluster-reader reads every kind", func(t *testing.T) {
		for r, name := range want {
			assert.Equal(t, []string{name}, listNames(t, reader, r), "%s as %s", r, readerUser)
			got := nmstateObject(r.version, r.kind, name)
			require.NoError(t, reader.Get(k.ctx(), client.ObjectKeyFromObject(got), got), "get %s %s as %s", r, name, readerUser)
			for _, verb := range []string{"get", "list", "watch"} {
				k.checkAccess(t, allow(readerUser, verb, r, "", name))
			}
		}
	})

	t.Run("cluster-reader writes none", func(t *testing.T) {
		for r, name := range want {
			for _, a := range []access{
				deny(readerUser, "create", r, "", "new"),
				deny(readerUser, "update", r, "", name),
				deny(readerUser, "patch", r, "", name),
				deny(readerUser, "delete", r, "", name),
				deny(readerUser, "deletecollection", r, "", ""),
				deny(readerUser, "update", r.status(), "", name),
				deny(readerUser, "patch", r.status(), "", name),
			} {
				t.Run(a.String(), func(t *testing.T) { k.checkAccess(t, a) })
			}
		}
	})

	t.Run("view reads none", func(t *testing.T) {
		for r, name := range want {
			k.checkAccess(t, deny(viewerUser, "list", r, "", ""))
			k.checkAccess(t, deny(viewerUser, "get", r, "", name))
		}
	})

	t.Run("disabled, cluster-reader still reads the kept policies", func(t *testing.T) {
		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
		k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
		k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
		require.True(t, k.exists(&rbacv1.ClusterRole{}, "", nmstate.ClusterReaderRole), "the reader role was pruned")
		for r, name := range want {
			assert.Equal(t, []string{name}, listNames(t, reader, r), "%s as %s after the disable", r, readerUser)
		}
		k.checkAccess(t, deny(readerUser, "delete", nncps, "", "bond0"))
	})
}

func nmstateObject(version, kind, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("nmstate.io/" + version)
	obj.SetKind(kind)
	obj.SetName(name)
	return obj
}

// listNames lists r through c, as whoever c acts as.
func listNames(t *testing.T, c client.Client, r resource) []string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(r.group + "/" + r.version)
	list.SetKind(r.kind + "List")
	require.NoError(t, c.List(t.Context(), list), "listing %s", r)
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names
}
