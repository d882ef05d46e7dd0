package nmstate

import (
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestStampAccounts(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	account := func(uid string, at time.Time) map[string]Stamped {
		return map[string]Stamped{"nmstate-handler": {UID: types.UID(uid), Created: at}}
	}
	handler := func(stamp string, at time.Time) map[string]Stamped {
		return map[string]Stamped{HandlerDaemonSet: {UID: types.UID(stamp), Created: at}}
	}
	tests := []struct {
		name  string
		acc   Accounts
		stamp string // "" for none
		held  bool
	}{
		{name: "installing: no account yet, no workload", acc: Accounts{}, held: true},
		{name: "the account created, the workload not yet", acc: Accounts{Accounts: account("a1", t0)}, stamp: "a1"},
		{name: "installed in one sync: unstamped, as old as its account, stays unstamped",
			acc: Accounts{Accounts: account("a1", t0), Workloads: handler("", t0)}},
		{name: "unstamped, from before the stamp: the account older, stays unstamped",
			acc: Accounts{Accounts: account("a1", t0), Workloads: handler("", t0.Add(time.Hour))}},
		{name: "unstamped, the account recreated since: rolls",
			acc: Accounts{Accounts: account("a2", t0.Add(time.Hour)), Workloads: handler("", t0)}, stamp: "a2"},
		{name: "stamped with its account: unchanged",
			acc: Accounts{Accounts: account("a1", t0), Workloads: handler("a1", t0)}, stamp: "a1"},
		{name: "stamped with an account since recreated: rolls",
			acc: Accounts{Accounts: account("a2", t0.Add(time.Hour)), Workloads: handler("a1", t0)}, stamp: "a2"},
		{name: "the account deleted: keeps its stamp until the next sync",
			acc: Accounts{Workloads: handler("a1", t0)}, stamp: "a1", held: true},
		{name: "the account deleted, unstamped: stays so",
			acc: Accounts{Workloads: handler("", t0)}, held: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := renderObjects(decide(Config{}, ha(configv1.BareMetalPlatformType)), renderParams{HandlerImage: "img", WebhookReplicas: 1}, manifestDir)
			require.NoError(t, err)
			var ds *unstructured.Unstructured
			for _, obj := range objs {
				if obj.GetKind() == "DaemonSet" {
					ds = obj
				}
			}
			require.NotNil(t, ds)
			// The handler alone: the other accounts exist and are stamped.
			acc := tt.acc
			if acc.Accounts == nil {
				acc.Accounts = map[string]Stamped{}
			}
			acc.Accounts["nmstate-webhook"], acc.Accounts["nmstate-metrics"] = Stamped{UID: "w"}, Stamped{UID: "m"}
			assert.Equal(t, tt.held, stampAccounts(objs, acc))
			got, found, err := unstructured.NestedString(ds.Object, "spec", "template", "metadata", "annotations", AccountUIDAnnotation)
			require.NoError(t, err)
			assert.Equal(t, tt.stamp != "", found, "stamped")
			assert.Equal(t, tt.stamp, got)
		})
	}
}
