package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const ha = configv1.HighlyAvailableTopologyMode

var bareMetalHA = nmstate.Infrastructure{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: ha, InfrastructureTopology: ha}

// policies are three valid NNCPs a user might have: a bond, a VLAN and a bridge.
var policies = map[string]string{
	"bond0": `
desiredState:
  interfaces:
  - name: bond0
    type: bond
    state: up
    link-aggregation:
      mode: active-backup
      port: [eth1, eth2]`,
	"vlan100": `
desiredState:
  interfaces:
  - name: eth1.100
    type: vlan
    state: up
    vlan:
      base-iface: eth1
      id: 100`,
	"br-ex2": `
nodeSelector:
  node-role.kubernetes.io/worker: ""
desiredState:
  interfaces:
  - name: br-ex2
    type: linux-bridge
    state: up
    bridge:
      port:
      - name: eth3`,
}

func nncp(t *testing.T, name string) *unstructured.Unstructured {
	var spec map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(policies[name]), &spec))
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// createPolicy creates the policy, retrying while the API server is not yet
// serving the CRD the host has just created (not yet Established).
func (k *cluster) createPolicy(name string) {
	k.t.Helper()
	var err error
	require.True(k.t, waitUntil(func() bool { err = k.c.Create(k.ctx(), nncp(k.t, name)); return err == nil }), "creating policy %s: %v", name, err)
}

func nncpNames(t *testing.T, k *cluster) []string {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("nmstate.io/v1")
	list.SetKind("NodeNetworkConfigurationPolicyList")
	require.NoError(t, k.c.List(k.ctx(), list))
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names
}

// 1. BareMetal, mode omitted: everything rendered exists on the server.
func TestBareMetalDefault(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	// CNO's own conditions, written by CNO's status manager before the host
	// starts; the host must leave them as they are, timestamps included.
	cnoConditions := []any{
		map[string]any{"type": "Available", "status": "True", "reason": "AsExpected", "lastTransitionTime": "2020-01-02T03:04:05Z"},
		map[string]any{"type": "Degraded", "status": "False", "lastTransitionTime": "2020-01-02T03:04:05Z"},
	}
	network := k.network()
	require.NoError(t, unstructured.SetNestedSlice(network.Object, cnoConditions, "status", "conditions"))
	require.NoError(t, k.c.Status().Update(k.ctx(), network))
	k.startHost()

	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	available := k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)
	assert.Contains(t, available.Message, "not yet picked up")
	conds := k.conditions()
	assert.Equal(t, operv1.ConditionFalse, conds[nmstate.ConditionDegraded].Status)
	assert.Empty(t, conds[nmstate.ConditionDegraded].Message, "nothing wrong, nothing to say")
	assert.Contains(t, conds[nmstate.ConditionAvailable].Message, "on by default on BareMetal", "the decision is on Available")
	assert.NotContains(t, available.Message, "on by default on BareMetal", "and only there")

	for _, obj := range rendered(t, "", bareMetalHA) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		require.True(t, waitUntil(func() bool {
			return k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got) == nil
		}), "%s %s was not created", obj.GetKind(), obj.GetName())
		assert.Equal(t, nmstate.PluginVersion, got.GetLabels()[nmstate.OwnerLabel], "%s %s", obj.GetKind(), obj.GetName())
		managed := false
		for _, f := range got.GetManagedFields() {
			managed = managed || f.Manager == controller.FieldManager
		}
		assert.True(t, managed, "%s %s is not applied by %s", obj.GetKind(), obj.GetName(), controller.FieldManager)
	}
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, handlerImage, ds.Spec.Template.Spec.Containers[0].Image)

	// CNO's own conditions are not touched by the plugin's status writes.
	got := k.conditions()
	assert.Len(t, got, 5, "CNO's two and the plugin's three")
	for _, raw := range cnoConditions {
		want := raw.(map[string]any)
		c := got[want["type"].(string)]
		assert.Equal(t, want["status"], string(c.Status), c.Type)
		assert.Equal(t, want["lastTransitionTime"], c.LastTransitionTime.UTC().Format(time.RFC3339), c.Type)
		reason, _ := want["reason"].(string)
		assert.Equal(t, reason, c.Reason, c.Type)
	}
}

// 2. AWS, mode omitted: nothing rendered, and the condition says how to opt in.
func TestAWSDefaultOff(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.AWSPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()

	c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonPlatformNotDefault)
	assert.Contains(t, c.Message, "off by default on AWS")
	assert.Contains(t, c.Message, `"mode":"Enabled"`)
	assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
	assert.False(t, k.exists(&corev1.Namespace{}, "", nmstate.Namespace))
	assert.False(t, k.exists(&apiextensionsv1.CustomResourceDefinition{}, "", nmstate.PoliciesCRD))
}

// 3. AWS, then the user opts in with kubectl: objects appear at once.
func TestAWSOptInWithKubectl(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.AWSPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonPlatformNotDefault)

	out, err := k.kubectl("patch", "network.operator", "cluster", "--type", "merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	require.NoError(t, err, out)
	// The host's recheck is an hour away (framework_test.go): only the
	// watch on the Network can have acted.
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)
	assert.Contains(t, k.conditions()[nmstate.ConditionAvailable].Message, "enabled by spec.kubernetesNMState.mode")
}

// 4a. A wrong-case mode is refused by the API server's schema.
func TestWrongCaseRejectedBySchema(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	out, err := k.kubectl("patch", "network.operator", "cluster", "--type", "merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"enabled"}}}`)
	require.Error(t, err)
	assert.Contains(t, out, `"enabled"`)
	assert.Contains(t, out, `"Enabled"`)
	assert.Contains(t, out, `"Disabled"`)
}

// 4b. With an older CRD that lets it through, the host reports Degraded,
// names the value, and deletes nothing.
func TestWrongCaseWithOldCRDDeletesNothing(t *testing.T) {
	k := startCluster(t, clusterOption{networkCRD: "testdata/crds/networks-no-enum.crd.yaml", nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	ds := &appsv1.DaemonSet{}
	k.waitExists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet)
	uid := ds.UID
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	objectsBefore := len(rendered(t, "", bareMetalHA))

	out, err := k.kubectl("patch", "network.operator", "cluster", "--type", "merge", "-p", `{"spec":{"kubernetesNMState":{"mode":"enabled"}}}`)
	require.NoError(t, err, out)
	c := k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonInvalidConfig)
	assert.Contains(t, c.Message, `"enabled"`)
	assert.Contains(t, c.Message, `"Enabled" or "Disabled"`)
	assert.Equal(t, nmstate.ReasonKeptDeployed, k.conditions()[nmstate.ConditionAvailable].Reason, "the handler keeps running")

	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, uid, ds.UID, "the handler DaemonSet was not recreated")
	present := 0
	for _, obj := range rendered(t, "", bareMetalHA) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got) == nil {
			present++
		}
	}
	assert.Equal(t, objectsBefore, present, "every rendered object is still there")
}

// 5. Disabling keeps the CRDs and every policy; enabling again finds them.
func TestDisableKeepsPolicies(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	for name := range policies {
		k.createPolicy(name)
	}

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitGone(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment)
	k.waitGone(&rbacv1.ClusterRole{}, "", "nmstate-handler")
	k.waitGone(&rbacv1.ClusterRoleBinding{}, "", "nmstate-handler")
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	c = k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	assert.Contains(t, c.Message, "3 NodeNetworkConfigurationPolicies exist and are not enforced")
	for _, crd := range nmstate.CRDNames() {
		assert.True(t, k.crdKept(crd), crd)
	}
	assert.ElementsMatch(t, []string{"bond0", "vlan100", "br-ex2"}, nncpNames(t, k))
	assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status, "disabled is not Degraded")

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)
	assert.ElementsMatch(t, []string{"bond0", "vlan100", "br-ex2"}, nncpNames(t, k))
}

// 6. Webhook replicas follow the topology.
func TestWebhookReplicasByTopology(t *testing.T) {
	for _, tt := range []struct {
		topology configv1.TopologyMode
		replicas int32
		pdb      bool
	}{
		{configv1.SingleReplicaTopologyMode, 1, false},
		{configv1.HighlyAvailableTopologyMode, 2, true},
	} {
		t.Run(string(tt.topology), func(t *testing.T) {
			k := startCluster(t, clusterOption{})
			k.createInfrastructure(configv1.BareMetalPlatformType, tt.topology, tt.topology)
			k.createNetwork(nil)
			k.startHost()
			dep := &appsv1.Deployment{}
			k.waitExists(dep, nmstate.Namespace, nmstate.WebhookDeployment)
			assert.Equal(t, tt.replicas, *dep.Spec.Replicas)
			k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
			pdb := &policyv1.PodDisruptionBudget{}
			if tt.pdb {
				k.waitExists(pdb, nmstate.Namespace, "nmstate-webhook")
				assert.Equal(t, 1, pdb.Spec.MinAvailable.IntValue())
			} else {
				assert.False(t, k.exists(pdb, nmstate.Namespace, "nmstate-webhook"), "no PDB may block the only node's drain")
			}
		})
	}
}

// 7. A standalone operator is present: nothing rendered; remove it and the
// host adopts the CRDs it left and keeps every policy.
func TestStandaloneOperatorHandover(t *testing.T) {
	k := startCluster(t, clusterOption{extraCRDs: []string{nmstatesCRD}})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(map[string]any{"mode": "Enabled"})

	// What the OLM operator leaves: its CRDs (applied by another manager),
	// a policy, and an NMState CR.
	k.applyCRDsAs("kubernetes-nmstate-operator")
	k.createPolicy("bond0")
	nmstateCR := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nmstate.io/v1", "kind": "NMState", "metadata": map[string]any{"name": "nmstate"}}}
	require.NoError(t, k.c.Create(k.ctx(), nmstateCR))

	// The operator's own handler, by the same name, controlled by its CR,
	// with the labels upstream's deploy/handler/operator.yaml gives it.
	operatorHandler := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet,
			Labels: map[string]string{"app": "kubernetes-nmstate", "component": "kubernetes-nmstate-handler"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate",
				UID: nmstateCR.GetUID(), Controller: ptr.To(true)}}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"component": "kubernetes-nmstate-handler"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"component": "kubernetes-nmstate-handler"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nmstate-handler", Image: "operator.example.com/handler:1"}}},
			},
		},
	}
	require.NoError(t, k.c.Create(k.ctx(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nmstate.Namespace}}))
	require.NoError(t, k.c.Create(k.ctx(), operatorHandler))

	k.startHost()
	c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	assert.Contains(t, c.Message, "oc delete nmstates --all")
	// The reconcile that wrote that condition rendered nothing: the
	// operator's handler is as the operator made it.
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, operatorHandler.UID, ds.UID)
	assert.Equal(t, "operator.example.com/handler:1", ds.Spec.Template.Spec.Containers[0].Image, "the host applied over the operator's handler")
	assert.NotContains(t, ds.Labels, nmstate.OwnerLabel)

	// Deleting the CR: the garbage collector (not running in envtest; done
	// here as it would) removes what the CR controlled, then the host
	// deploys its own handler.
	require.NoError(t, k.c.Delete(k.ctx(), nmstateCR))
	require.NoError(t, k.c.Delete(k.ctx(), ds))
	fresh := &appsv1.DaemonSet{}
	require.True(t, waitUntil(func() bool {
		return k.exists(fresh, nmstate.Namespace, nmstate.HandlerDaemonSet) && fresh.UID != operatorHandler.UID &&
			fresh.Labels[nmstate.OwnerLabel] == nmstate.PluginVersion
	}), "the host never deployed its own handler; last seen: UID %s (the operator's %s), labels %v", fresh.UID, operatorHandler.UID, fresh.Labels)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)
	for _, name := range nmstate.CRDNames() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.True(t, waitUntil(func() bool {
			require.True(t, k.exists(crd, "", name))
			return crd.Labels[nmstate.OwnerLabel] == nmstate.PluginVersion
		}), "CRD %s not adopted", name)
	}
	assert.Equal(t, []string{"bond0"}, nncpNames(t, k))
}

// 8. Day 1: a client creating an NNCP before the CRDs exist succeeds once
// the host's first reconcile has created them.
func TestDayOnePolicyBeforeCRDs(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	require.Error(t, k.c.Create(k.ctx(), nncp(t, "vlan100")), "the CRD cannot exist yet")

	policy := nncp(t, "vlan100") // built here: require may not run in the goroutine
	created := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(wait)
		var err error
		for time.Now().Before(deadline) {
			if err = k.c.Create(k.ctx(), policy.DeepCopy()); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		created <- err
	}()
	k.startHost()
	require.NoError(t, <-created)
	assert.Equal(t, []string{"vlan100"}, nncpNames(t, k))
}

// 9. A user deleting the handler or editing its image: the host restores it.
func TestHandlerRestored(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	ds := &appsv1.DaemonSet{}
	k.waitExists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet)

	require.NoError(t, k.c.Delete(k.ctx(), ds))
	fresh := &appsv1.DaemonSet{}
	require.True(t, waitUntil(func() bool {
		return k.exists(fresh, nmstate.Namespace, nmstate.HandlerDaemonSet) && fresh.UID != ds.UID
	}), "the deleted handler was not recreated; last seen: UID %s (deleted %s)", fresh.UID, ds.UID)

	out, err := k.kubectl("-n", nmstate.Namespace, "set", "image", "daemonset/"+nmstate.HandlerDaemonSet, "nmstate-handler=evil.example.com/handler:1")
	require.NoError(t, err, out)
	require.True(t, waitUntil(func() bool {
		return k.exists(fresh, nmstate.Namespace, nmstate.HandlerDaemonSet) && fresh.Spec.Template.Spec.Containers[0].Image == handlerImage
	}), "the edited image was not restored; last seen: %s", fresh.Spec.Template.Spec.Containers[0].Image)
}

// 10. What a newer plugin no longer renders is pruned; CRDs never are.
func TestPruneNoLongerRendered(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)

	owned := map[string]string{nmstate.OwnerLabel: "0.0.1"}
	// Left behind by an older plugin version.
	oldCRD := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "oldthings.nmstate.io", Labels: owned},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "nmstate.io", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "oldthings", Singular: "oldthing", Kind: "OldThing", ListKind: "OldThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
		},
	}
	// Not ours: no label. Ours but adopted by another controller (the
	// standalone operator uses the same names): an owner reference. Created
	// first, so that the prune pass that removes the leftovers below has
	// them in its cache too.
	foreign := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "someone-else", Namespace: nmstate.Namespace}}
	require.NoError(t, k.c.Create(k.ctx(), foreign))
	adopted := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nmstate-adopted", Namespace: nmstate.Namespace, Labels: owned,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "nmstate-uid", Controller: ptr.To(true)}}}}
	require.NoError(t, k.c.Create(k.ctx(), adopted))
	require.NoError(t, k.c.Create(k.ctx(), oldCRD))
	oldSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nmstate-old", Namespace: nmstate.Namespace, Labels: owned}}
	require.NoError(t, k.c.Create(k.ctx(), oldSA))
	oldRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "nmstate-old", Labels: owned}}
	require.NoError(t, k.c.Create(k.ctx(), oldRole))

	k.waitGone(&corev1.ServiceAccount{}, nmstate.Namespace, "nmstate-old")
	k.waitGone(&rbacv1.ClusterRole{}, "", "nmstate-old")
	assert.True(t, k.crdKept("oldthings.nmstate.io"), "CRDs are never pruned")
	assert.True(t, k.exists(&corev1.ServiceAccount{}, nmstate.Namespace, "someone-else"))
	// The adopted one is released, not deleted: it loses the host's label
	// (and with it its place in the host's prune and cache) and stays.
	sa := &corev1.ServiceAccount{}
	released := waitUntil(func() bool {
		_, labelled := sa.Labels[nmstate.OwnerLabel]
		return k.exists(sa, nmstate.Namespace, "nmstate-adopted") && !labelled
	})
	assert.True(t, released, "the adopted ServiceAccount is kept and loses the host's label; now: %v", sa.Labels)
	assert.Equal(t, adopted.OwnerReferences[0].UID, sa.OwnerReferences[0].UID, "and keeps its owner")
	assert.True(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))
}

// 11. The handler DaemonSet's status, as its controller writes it, drives
// Progressing and Available: a Linux node whose handler never becomes ready
// holds the rollout at 6 of 7. Once that node leaves the handler's
// nodeSelector (relabelled), the DaemonSet controller deletes its pod and
// reports 6 of 6. Deleting the node instead would take up to a minute: the
// DaemonSet controller has no handler for a deleted Node and recounts only
// once the pod garbage collector removes the pod left on it, which it does
// after a fixed 40s quarantine.
func TestStatusFromDaemonSet(t *testing.T) {
	hung := devcluster.LinuxWorker("worker-hung")
	hung.PodsNeverReady = true
	k := startCluster(t, clusterOption{nodes: append(devcluster.BareMetalNodes(), hung)})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	require.True(t, waitUntil(func() bool {
		return strings.Contains(k.conditions()[nmstate.ConditionProgressing].Message, "handler ready on 6 of 7 nodes")
	}), "Progressing: %+v", k.conditions()[nmstate.ConditionProgressing])
	assert.Equal(t, operv1.ConditionTrue, k.conditions()[nmstate.ConditionProgressing].Status)
	assert.Equal(t, operv1.ConditionTrue, k.conditions()[nmstate.ConditionAvailable].Status)

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: hung.Name}}
	require.NoError(t, k.c.Patch(k.ctx(), node, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"kubernetes.io/os":null}}}`))))
	c := k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	assert.Contains(t, c.Message, "handler ready on 6 of 6 nodes")
	assert.Contains(t, c.Message, fmt.Sprintf("webhook %d of %d", 2, 2))
	require.True(t, waitUntil(func() bool {
		for _, p := range k.livePods(nmstate.HandlerDaemonSet) {
			if p.Spec.NodeName == hung.Name {
				return false
			}
		}
		return true
	}), "the DaemonSet controller never deleted the handler on %s", hung.Name)
}
