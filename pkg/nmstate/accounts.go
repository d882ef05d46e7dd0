package nmstate

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// AccountUIDAnnotation, on the pod template of each workload, is the UID of
// the ServiceAccount its pods run under. A pod's token names that UID, and
// the API server refuses it once the account is deleted, even when the
// account is recreated under the same name at once; the kubelet asks for a
// new token only as the old one nears its expiry (about 48 minutes with the
// default lifetime). A recreated account changes the annotation, so the
// pods roll, and each new pod gets a token of the account as it now is.
const AccountUIDAnnotation = "networkoperator.openshift.io/service-account-uid"

// AccountRecheck is Result.RecheckAfter when an account was missing: the
// apply recreates it, and only the next sync sees its new UID.
const AccountRecheck = 2 * time.Second

// Accounts is what pkg/clusterstate reads of the workloads and their
// ServiceAccounts in Namespace, for stampAccounts.
type Accounts struct {
	// Accounts are the ServiceAccounts that exist, by name.
	Accounts map[string]Stamped
	// Workloads are the DaemonSets and Deployments that exist, by name,
	// with their AccountUIDAnnotation as UID ("" for none).
	Workloads map[string]Stamped
}

// Stamped is an object's UID, or the UID a workload is stamped with, and
// the object's creation time.
type Stamped struct {
	UID     types.UID
	Created time.Time
}

// stampAccounts sets AccountUIDAnnotation on the pod template of each
// workload among objs, so that its pods roll when its account is recreated,
// and only then:
//   - a workload stamped with another UID than its account's now has rolls
//     to the account's;
//   - an unstamped one (created before its account existed, or by a release
//     without the stamp) stays unstamped while its account is no newer than
//     it, since every pod it made then has a token of that account; an
//     account created after it was recreated: it rolls;
//   - while its account is missing, it keeps what it has. The apply
//     recreates the account, and held tells the caller to sync again soon.
//
// An install, which creates the accounts before the workloads, rolls
// nothing.
func stampAccounts(objs []*unstructured.Unstructured, acc Accounts) (held bool) {
	for _, obj := range objs {
		name, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "serviceAccountName")
		if name == "" {
			continue
		}
		account, exists := acc.Accounts[name]
		workload, deployed := acc.Workloads[obj.GetName()]
		stamp := workload.UID
		switch {
		case !exists:
			held = true
		case !deployed || workload.UID != "" || account.Created.After(workload.Created):
			stamp = account.UID
		}
		if stamp != "" {
			// Fails only on a template whose annotations are no map, a
			// bindata bug that the apply then reports.
			_ = unstructured.SetNestedField(obj.Object, string(stamp), "spec", "template", "metadata", "annotations", AccountUIDAnnotation)
		}
	}
	return held
}
