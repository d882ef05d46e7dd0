package nmstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

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
		name            string
		group, kind     string
		live            *metav1.ObjectMeta
		workloadsRemain bool
		want            PruneAction
	}{
		{name: "ours, controlled by the Network", group: "apps", kind: "DaemonSet", live: obj(true, network), want: PruneDelete},
		{name: "ours, no owner (the host)", group: "apps", kind: "DaemonSet", live: obj(true), want: PruneDelete},
		{name: "adopted by the standalone operator", group: "apps", kind: "DaemonSet", live: obj(true, nmstateCR), want: PruneAdopted},
		{name: "a non-controller owner is no adoption", group: "apps", kind: "DaemonSet",
			live: obj(true, metav1.OwnerReference{Kind: "ConfigMap", Name: "x", UID: "c"}), want: PruneDelete},
		{name: "no owner label: not the plugin's to delete", group: "apps", kind: "DaemonSet", live: obj(false, network), want: PruneKeep},
		{name: "a CRD is kept", group: "apiextensions.k8s.io", kind: "CustomResourceDefinition",
			live: &metav1.ObjectMeta{Name: crdNames[0], Labels: map[string]string{OwnerLabel: PluginVersion}}, want: PruneKeep},
		{name: "the Namespace is kept", kind: "Namespace", live: &metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{OwnerLabel: PluginVersion}}, want: PruneKeep},
		{name: "the admission policy is kept", group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicy",
			live: &metav1.ObjectMeta{Name: ValidationPolicy, Labels: map[string]string{OwnerLabel: PluginVersion}}, want: PruneKeep},
		{name: "the reader role is kept", group: "rbac.authorization.k8s.io", kind: "ClusterRole",
			live: &metav1.ObjectMeta{Name: ClusterReaderRole, Labels: map[string]string{OwnerLabel: PluginVersion}}, want: PruneKeep},
		{name: "the reader role, its pods still there: kept as ever", group: "rbac.authorization.k8s.io", kind: "ClusterRole",
			live: &metav1.ObjectMeta{Name: ClusterReaderRole, Labels: map[string]string{OwnerLabel: PluginVersion}}, workloadsRemain: true, want: PruneKeep},
		{name: "the reader role adopted by the standalone operator: its, released rather than kept", group: "rbac.authorization.k8s.io",
			kind: "ClusterRole", live: &metav1.ObjectMeta{Name: ClusterReaderRole, Labels: map[string]string{OwnerLabel: PluginVersion},
				OwnerReferences: []metav1.OwnerReference{nmstateCR}}, want: PruneAdopted},
		{name: "the handler's role is not", group: "rbac.authorization.k8s.io", kind: "ClusterRole",
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
		{name: "a Service goes while pods remain", kind: "Service",
			live: &metav1.ObjectMeta{Name: "nmstate-webhook", Namespace: Namespace, Labels: map[string]string{OwnerLabel: PluginVersion}}, workloadsRemain: true, want: PruneDelete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecidePrune(Unrendered{Group: tt.group, Kind: tt.kind, Live: tt.live,
				WorkloadsRemain: tt.workloadsRemain, OwnController: isNetwork})
			assert.Equal(t, tt.want, got, "got %s, want %s", got, tt.want)
		})
	}
}
