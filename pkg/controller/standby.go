package controller

import (
	"bytes"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// embeddingCNO finds a Cluster Network Operator that renders
// kubernetes-nmstate itself (CNO with hack/cno/kubernetes-nmstate.patch): a
// field manager other than this host's own owns the KubernetesNMState*
// conditions on the Network status. Both would apply the same objects with
// ForceOwnership, each undoing the other's writes, so the host then writes
// nothing; what CNO renders wins, as it is what ships.
func embeddingCNO(network *unstructured.Unstructured) (string, bool) {
	for _, mf := range network.GetManagedFields() {
		if mf.Manager == StatusFieldManager || mf.FieldsV1 == nil {
			continue
		}
		if bytes.Contains(mf.FieldsV1.Raw, []byte(nmstate.ConditionAvailable)) {
			return mf.Manager, true
		}
	}
	return "", false
}
