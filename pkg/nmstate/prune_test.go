package nmstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Every object any topology renders is one MayBeRendered admits: CNO's
// status manager reads nothing else before it prunes, so an object it
// missed would be pruned without the plugin's say.
func TestMayBeRenderedCoversEveryObject(t *testing.T) {
	for _, c := range []cluster{haCluster, snoCluster, hostedCluster} {
		for _, obj := range mustRender(t, Config{Mode: ModeEnabled}, c) {
			gvk := obj.GroupVersionKind()
			assert.True(t, MayBeRendered(gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()),
				"%s %s/%s is rendered but MayBeRendered says no", gvk.Kind, obj.GetNamespace(), obj.GetName())
		}
	}
}

func TestMayBeRendered(t *testing.T) {
	tests := []struct {
		group, kind, namespace, name string
		want                         bool
	}{
		{"apps", "DaemonSet", "openshift-multus", "multus", false},
		{"apps", "DaemonSet", Namespace, "anything", true},
		{"", "Namespace", "openshift-multus", "", false},
		{"", "Namespace", "", "openshift-multus", false},
		{"", "Namespace", "", Namespace, true},
		{"apiextensions.k8s.io", "CustomResourceDefinition", "", "network-attachment-definitions.k8s.cni.cncf.io", false},
		{"apiextensions.k8s.io", "CustomResourceDefinition", "", "nodenetworkstates.nmstate.io", true},
		{"rbac.authorization.k8s.io", "ClusterRole", "", "multus-admission-controller-webhook", false},
		{"rbac.authorization.k8s.io", "ClusterRole", "", "nmstate-handler", true},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "", "nncp-validation-policy-binding", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MayBeRendered(tt.group, tt.kind, tt.namespace, tt.name), "%s %s %s/%s", tt.group, tt.kind, tt.namespace, tt.name)
	}
}

func TestDecidePrune(t *testing.T) {
	network := metav1.OwnerReference{APIVersion: "operator.openshift.io/v1", Kind: "Network", Name: "cluster", UID: "n", Controller: ptr.To(true)}
	nmstateCR := metav1.OwnerReference{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "s", Controller: ptr.To(true)}
	isNetwork := func(o metav1.OwnerReference) bool { return o.Kind == "Network" }
	obj := func(labelled bool, owners ...metav1.OwnerReference) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Name: HandlerDaemonSet, Namespace: Namespace, OwnerReferences: owners}
		if labelled {
			m.Labels = map[string]string{OwnerLabel: PluginVersion}
		}
		return m
	}
	tests := []struct {
		name                     string
		group, kind, objName     string
		live                     *metav1.ObjectMeta
		readFailed, renderFailed bool
		workloadsRemain          bool
		want                     PruneAction
	}{
		{name: "ours, controlled by the Network", group: "apps", kind: "DaemonSet", live: obj(true, network), want: PruneDelete},
		{name: "ours, no owner (the host)", group: "apps", kind: "DaemonSet", live: obj(true), want: PruneDelete},
		{name: "already gone", group: "apps", kind: "DaemonSet", want: PruneDelete},
		{name: "render failed: kept and looked at again", group: "apps", kind: "DaemonSet", live: obj(true, network), renderFailed: true, want: PruneLater},
		{name: "render failed, object gone", group: "apps", kind: "DaemonSet", renderFailed: true, want: PruneLater},
		{name: "read failed", group: "apps", kind: "DaemonSet", readFailed: true, want: PruneLater},
		{name: "adopted by the standalone operator", group: "apps", kind: "DaemonSet", live: obj(true, nmstateCR), want: PruneAdopted},
		{name: "a non-controller owner is no adoption", group: "apps", kind: "DaemonSet",
			live: obj(true, metav1.OwnerReference{Kind: "ConfigMap", Name: "x", UID: "c"}), want: PruneDelete},
		{name: "no owner label: not the plugin's to delete", group: "apps", kind: "DaemonSet", live: obj(false, network), want: PruneKeep},
		{name: "a CRD is kept, even when its read failed", group: "apiextensions.k8s.io", kind: "CustomResourceDefinition",
			objName: crdNames[0], readFailed: true, want: PruneKeep},
		{name: "the Namespace is kept", kind: "Namespace", objName: Namespace, live: &metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{OwnerLabel: PluginVersion}}, want: PruneKeep},
		{name: "the admission policy is kept", group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicy", objName: ValidationPolicy, want: PruneKeep},
		{name: "the reader role is kept", group: "rbac.authorization.k8s.io", kind: "ClusterRole", objName: ClusterReaderRole, want: PruneKeep},
		{name: "the reader role adopted by the standalone operator: its, released rather than kept", group: "rbac.authorization.k8s.io",
			kind: "ClusterRole", live: &metav1.ObjectMeta{Name: ClusterReaderRole, Labels: map[string]string{OwnerLabel: PluginVersion},
				OwnerReferences: []metav1.OwnerReference{nmstateCR}}, want: PruneAdopted},
		{name: "the handler's role is not", group: "rbac.authorization.k8s.io", kind: "ClusterRole", objName: "nmstate-handler",
			live: &metav1.ObjectMeta{Name: "nmstate-handler", Labels: map[string]string{OwnerLabel: PluginVersion}}, want: PruneDelete},
		{name: "the handler's role, its pods still there: later", group: "rbac.authorization.k8s.io", kind: "ClusterRole",
			live: &metav1.ObjectMeta{Name: "nmstate-handler", Labels: map[string]string{OwnerLabel: PluginVersion}}, workloadsRemain: true, want: PruneLater},
		{name: "the handler's account, its pods still there: later", kind: "ServiceAccount",
			live: &metav1.ObjectMeta{Name: "nmstate-handler", Namespace: Namespace, Labels: map[string]string{OwnerLabel: PluginVersion}}, workloadsRemain: true, want: PruneLater},
		{name: "each binding, its pods still there: later", group: "rbac.authorization.k8s.io", kind: "RoleBinding",
			live: &metav1.ObjectMeta{Name: "nmstate-handler", Namespace: Namespace, Labels: map[string]string{OwnerLabel: PluginVersion}}, workloadsRemain: true, want: PruneLater},
		{name: "the handler's account adopted while its pods run: released, not deleted", kind: "ServiceAccount",
			live: &metav1.ObjectMeta{Name: "nmstate-handler", Namespace: Namespace, Labels: map[string]string{OwnerLabel: PluginVersion},
				OwnerReferences: []metav1.OwnerReference{nmstateCR}}, workloadsRemain: true, want: PruneAdopted},
		{name: "a workload goes while pods remain", group: "apps", kind: "Deployment", live: obj(true, network), workloadsRemain: true, want: PruneDelete},
		{name: "a Service goes while pods remain", kind: "Service", objName: "nmstate-webhook", workloadsRemain: true, want: PruneDelete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.objName
			var live metav1.Object
			if tt.live != nil {
				live, name = tt.live, tt.live.Name
			}
			if name == "" {
				name = HandlerDaemonSet
			}
			u := Unrendered{Group: tt.group, Kind: tt.kind, Name: name, Live: live,
				ReadFailed: tt.readFailed, RenderFailed: tt.renderFailed, WorkloadsRemain: tt.workloadsRemain, OwnController: isNetwork}
			got := DecidePrune(u)
			assert.Equal(t, tt.want, got, "got %s, want %s", got, tt.want)
			// Without the read, the same answer, but an adoption: kept all the same.
			u.Live, u.ReadFailed = nil, false
			if unread, ok := PruneWithoutReading(u); ok && got == PruneAdopted {
				assert.NotEqual(t, PruneDelete, unread, "an adopted object deleted without a read")
			} else if ok {
				assert.Equal(t, got, unread, "without the read: got %s, want %s", unread, got)
			}
		})
	}
}

// Only an object whose answer the live object can change is read: one the
// plugin deletes when it is its own, rendered before and not now.
func TestPruneWithoutReading(t *testing.T) {
	tests := []struct {
		name                string
		group, kind, object string
		renderFailed        bool
		workloadsRemain     bool
		want                PruneAction
		wantOK              bool
	}{
		{name: "a workload, rendered fine: read it", group: "apps", kind: "DaemonSet", object: HandlerDaemonSet},
		{name: "a workload, render failed", group: "apps", kind: "DaemonSet", object: HandlerDaemonSet, renderFailed: true, want: PruneLater, wantOK: true},
		{name: "a CRD", group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", object: PoliciesCRD, want: PruneKeep, wantOK: true},
		{name: "a CRD, render failed", group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", object: PoliciesCRD,
			renderFailed: true, want: PruneKeep, wantOK: true},
		{name: "the Namespace", kind: "Namespace", object: Namespace, want: PruneKeep, wantOK: true},
		{name: "the handler's role", group: "rbac.authorization.k8s.io", kind: "ClusterRole", object: "nmstate-handler"},
		{name: "the handler's role, its pods still there", group: "rbac.authorization.k8s.io", kind: "ClusterRole", object: "nmstate-handler",
			workloadsRemain: true, want: PruneLater, wantOK: true},
		{name: "the handler's account, its pods still there", kind: "ServiceAccount", object: "nmstate-handler",
			workloadsRemain: true, want: PruneLater, wantOK: true},
		{name: "the reader role, its pods still there: kept as ever", group: "rbac.authorization.k8s.io", kind: "ClusterRole", object: ClusterReaderRole,
			workloadsRemain: true, want: PruneKeep, wantOK: true},
		{name: "a workload while pods remain: read it", group: "apps", kind: "DaemonSet", object: HandlerDaemonSet, workloadsRemain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := PruneWithoutReading(Unrendered{Group: tt.group, Kind: tt.kind, Name: tt.object, RenderFailed: tt.renderFailed, WorkloadsRemain: tt.workloadsRemain})
			assert.Equal(t, tt.wantOK, ok)
			if tt.wantOK {
				assert.Equal(t, tt.want, got, "got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestKeepOutOfRelatedObjects(t *testing.T) {
	tests := []struct {
		group, resource, name string
		want                  bool
	}{
		{"apiextensions.k8s.io", "customresourcedefinitions", "nodenetworkconfigurationpolicies.nmstate.io", true},
		{"apiextensions.k8s.io", "customresourcedefinitions", "nodenetworkconfigurationenactments.nmstate.io", true},
		{"apiextensions.k8s.io", "customresourcedefinitions", "nodenetworkstates.nmstate.io", true},
		// Upstream's operator CRD is not the plugin's.
		{"apiextensions.k8s.io", "customresourcedefinitions", "nmstates.nmstate.io", false},
		{"apiextensions.k8s.io", "customresourcedefinitions", "network-attachment-definitions.k8s.cni.cncf.io", false},
		// A kind where a resource belongs is not matched.
		{"apiextensions.k8s.io", "CustomResourceDefinition", "nodenetworkstates.nmstate.io", false},
		{"", "namespaces", Namespace, false},
		{"apps", "daemonsets", HandlerDaemonSet, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, KeepOutOfRelatedObjects(tt.group, tt.resource, tt.name), "%s/%s %s", tt.group, tt.resource, tt.name)
	}
}
