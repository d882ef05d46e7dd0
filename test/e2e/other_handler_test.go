package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// cnaoHandler is a kubernetes-nmstate handler deployed outside OLM, the way
// cluster-network-addons-operator (OpenShift Virtualization) does: no name
// prefix, in its operand namespace openshift-cnv, with upstream's labels on
// the DaemonSet and its pods and upstream's node lock. Only what tells it
// apart is written out; no controller runs it here.
const cnaoHandler = `apiVersion: v1
kind: Namespace
metadata:
  name: openshift-cnv
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nmstate-handler
  namespace: openshift-cnv
  labels:
    app: kubernetes-nmstate
    component: kubernetes-nmstate-handler
spec:
  selector:
    matchLabels:
      name: nmstate-handler
  template:
    metadata:
      labels:
        app: kubernetes-nmstate
        component: kubernetes-nmstate-handler
        name: nmstate-handler
    spec:
      hostNetwork: true
      containers:
      - name: nmstate-handler
        image: registry.example.com/cnv/kubernetes-nmstate-handler:v4.9
        command: [manager]
        env:
        - name: NMSTATE_INSTANCE_NODE_LOCK_FILE
          value: /var/k8s_nmstate/handler_lock
        securityContext:
          privileged: true
        volumeMounts:
        - name: nmstate-lock
          mountPath: /var/k8s_nmstate
      volumes:
      - name: nmstate-lock
        hostPath:
          path: /var/k8s_nmstate
`

// TestOtherHandlerDefersTheHost: a handler DaemonSet the plugin did not
// render defers the host like the OLM operator does, whatever the mode
// (here Enabled), whether it is there before the host starts (with the CRDs
// and a policy it serves) or appears while the host runs its own handler.
// From before the host starts to the end, a watch fails the test on any
// creation of the host's handler DaemonSet while the other one exists, and
// from the policy's creation on, on any deletion of a CRD or the policy. The
// conditions name the other DaemonSet; while it stays the host looks again
// three times and stays aside; once it is deleted the host's own handler
// appears and the policy is the same object.
//
// The third case puts the other handler in a namespace listed after
// openshift-nmstate, so that the host's own handler comes first in the
// bounded list the lookup reads.
func TestOtherHandlerDefersTheHost(t *testing.T) {
	for _, tc := range []struct {
		name, namespace string
		before          bool
	}{
		{name: "before the host starts", namespace: "openshift-cnv", before: true},
		{name: "while the host runs", namespace: "openshift-cnv"},
		{name: "while the host runs in a namespace listed after ours", namespace: "vendor-nmstate"},
	} {
		t.Run(tc.name, func(t *testing.T) { otherHandlerDefers(t, tc.namespace, tc.before) })
	}
}

func otherHandlerDefers(t *testing.T, namespace string, before bool) {
	manifest := strings.ReplaceAll(cnaoHandler, "openshift-cnv", namespace)
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(map[string]any{"mode": "Enabled"})
	stopHandlers := k.watchHandlerCreations()
	var stopDeletions func()
	if before {
		// What the other manager left: its CRDs and a user's policy.
		k.applyCRDsAs("cluster-network-addons-operator")
		k.createPolicy("bond0")
		stopDeletions = k.watchDeletions()
		out, err := k.kubectlApply(manifest)
		require.NoError(t, err, out)
	}
	reconciles := &reconcileCounter{}
	// Nothing the host watches changes when a DaemonSet comes or goes in
	// another namespace: it notices on its recheck (30 s in production,
	// CNO's 3-minute resync), made short here.
	k.startHost(reconciles.option(), func(o *controller.Options) { o.RecheckInterval = time.Second })
	if !before {
		k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
		k.createPolicy("bond0")
		stopDeletions = k.watchDeletions()
		out, err := k.kubectlApply(manifest)
		require.NoError(t, err, out)
	}
	policyUID := k.nncpObject("bond0").GetUID()

	c := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	assert.Contains(t, c.Message, "DaemonSet "+namespace+"/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render")
	t.Logf("the message: %s", c.Message)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	// Three more looks while the other handler stays: none may deploy ours.
	for range 3 {
		reconciles.after(t, func() {})
	}
	other := &appsv1.DaemonSet{}
	require.True(t, k.exists(other, namespace, "nmstate-handler"))
	for _, f := range other.ManagedFields {
		assert.NotEqual(t, controller.FieldManager, f.Manager, "the host wrote to the other handler")
	}

	out, err := k.kubectl("-n", namespace, "delete", "daemonset", "nmstate-handler")
	require.NoError(t, err, out)
	ours := &appsv1.DaemonSet{}
	k.waitExists(ours, nmstate.Namespace, nmstate.HandlerDaemonSet)
	assert.Equal(t, nmstate.PluginVersion, ours.Labels[nmstate.OwnerLabel])
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)

	t.Logf("handler DaemonSet events: %s", strings.Join(stopHandlers(), "; "))
	stopDeletions()
	for _, name := range nmstate.CRDNames() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.True(t, k.exists(crd, "", name))
		assert.Equal(t, nmstate.PluginVersion, crd.Labels[nmstate.OwnerLabel], "CRD %s adopted", name)
	}
	assert.Equal(t, policyUID, k.nncpObject("bond0").GetUID(), "the policy is the same object")
}

// applyCRDsAs creates the nmstate.io CRDs as another manager would: the
// same generated CRDs, without the plugin's owner label.
func (k *cluster) applyCRDsAs(manager string) {
	k.t.Helper()
	for _, obj := range rendered(k.t, "", bareMetalHA) {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		obj = obj.DeepCopy()
		labels := obj.GetLabels()
		delete(labels, nmstate.OwnerLabel)
		obj.SetLabels(labels)
		require.NoError(k.t, k.c.Apply(k.ctx(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(manager)))
	}
}

// watchHandlerCreations watches handler DaemonSets in every namespace until
// stop, which returns every event seen, and fails the test the moment the
// host's own is created while another handler DaemonSet exists.
func (k *cluster) watchHandlerCreations() (stop func() []string) {
	t := k.t
	t.Helper()
	list := &appsv1.DaemonSetList{}
	require.NoError(t, k.c.List(k.ctx(), list, handlerComponent))
	live := map[string]bool{}
	for _, ds := range list.Items {
		live[ds.Namespace+"/"+ds.Name] = true
	}
	ours := nmstate.Namespace + "/" + nmstate.HandlerDaemonSet
	var events []string
	start := time.Now()
	w := k.startWatch(&appsv1.DaemonSetList{}, list.ResourceVersion, func(ev watch.Event) {
		ds, ok := ev.Object.(*appsv1.DaemonSet)
		if !ok {
			return
		}
		key := ds.Namespace + "/" + ds.Name
		events = append(events, fmt.Sprintf("%s %s %s", time.Since(start).Round(time.Millisecond), ev.Type, key))
		switch ev.Type {
		case watch.Deleted:
			delete(live, key)
		case watch.Added:
			others := slices.DeleteFunc(slices.Sorted(maps.Keys(live)), func(s string) bool { return s == ours })
			if key == ours && len(others) > 0 {
				t.Errorf("the host created its handler DaemonSet %s while %v existed", key, others)
			}
			live[key] = true
		}
	}, handlerComponent)
	return func() []string {
		w.stop()
		return events
	}
}

// watchDeletions watches the nmstate.io CRDs and the policies until stop and
// fails the test the moment one is deleted or its deletion starts.
func (k *cluster) watchDeletions() (stop func()) {
	t := k.t
	t.Helper()
	fail := func(kind string) func(watch.Event) {
		failed := map[string]bool{} // once per object is enough
		return func(ev watch.Event) {
			obj, ok := ev.Object.(client.Object)
			if !ok || (kind == "CRD" && !slices.Contains(nmstate.CRDNames(), obj.GetName())) {
				return
			}
			if name := obj.GetName(); (ev.Type == watch.Deleted || obj.GetDeletionTimestamp() != nil) && !failed[name] {
				failed[name] = true
				t.Errorf("%s %s deleted (%s)", kind, name, ev.Type)
			}
		}
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	require.NoError(t, k.c.List(k.ctx(), crds))
	policies := &unstructured.UnstructuredList{}
	policies.SetAPIVersion("nmstate.io/v1")
	policies.SetKind("NodeNetworkConfigurationPolicyList")
	require.NoError(t, k.c.List(k.ctx(), policies))
	crdWatch := k.startWatch(&apiextensionsv1.CustomResourceDefinitionList{}, crds.ResourceVersion, fail("CRD"))
	policyWatch := k.startWatch(policies.DeepCopy(), policies.GetResourceVersion(), fail("policy"))
	return func() {
		crdWatch.stop()
		policyWatch.stop()
	}
}

type runningWatch struct {
	stop func()
}

// startWatch follows list's kind from resourceVersion and hands each event
// to handle, one at a time, until stop (which also runs when the test
// ends). handle's effects may be read once stop has returned. A watch that
// ends before stop fails the test.
func (k *cluster) startWatch(list client.ObjectList, resourceVersion string, handle func(watch.Event), opts ...client.ListOption) runningWatch {
	t := k.t
	t.Helper()
	wc, err := client.NewWithWatch(k.cfg, client.Options{Scheme: k.c.Scheme()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, list, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})...)
	require.NoError(t, err)
	var endedEarly string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ctx.Err() != nil {
				return // stopped: an error now is the stop's own
			}
			if ev.Type == watch.Error {
				endedEarly = fmt.Sprintf("%+v", ev.Object)
				return
			}
			handle(ev)
		}
		if ctx.Err() == nil {
			endedEarly = "the server closed it"
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			w.Stop()
			<-done
			assert.Empty(t, endedEarly, "the %T watch ended before the test was done", list)
		})
	}
	t.Cleanup(stop)
	return runningWatch{stop: stop}
}
