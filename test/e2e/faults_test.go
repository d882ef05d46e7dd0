package e2e

// Bad input and API faults. Every test here deploys kubernetes-nmstate first,
// records the UID of every rendered object, then does its worst, and checks
// at the end that none of them was deleted or recreated: a bad input or a
// flaky API server must never tear down a running handler or a user's policy.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// conditionMessageLimit bounds a condition message whatever the input: a
// megabyte of garbage in the config must not become a megabyte condition.
const conditionMessageLimit = 1024

// verdict is what a Network CRD's schema does with a value.
type verdict int

const (
	stored   verdict = iota // kept as sent: the host must report it
	rejected                // refused by the API server: nothing reaches the host
	pruned                  // unknown fields dropped: the host sees the rest
)

func (v verdict) String() string { return [...]string{"stored", "rejected", "pruned"}[v] }

// badInput is a hostile spec.kubernetesNMState.
type badInput struct {
	name  string
	value string // JSON
	// want are substrings of the Degraded message when the host sees the
	// value as sent: the field and the bad value.
	want []string
	// What the shipped CRD and the old CRD without the mode enum do with
	// it; the permissive CRD (no schema for the field) stores everything.
	real, noEnum verdict
	// prunedTo is what a pruning schema keeps, and prunedReason the
	// KubernetesNMStateAvailable reason the host then reports.
	prunedTo, prunedReason string
}

func huge(n int) string { return strings.Repeat("E", n) }

var badInputs = []badInput{
	// The mode: wrong case, typos, whitespace, huge.
	{name: "mode wrong case", value: `{"mode":"enabled"}`, want: []string{`spec.kubernetesNMState.mode is "enabled"`, `did you mean "Enabled"`}, real: rejected, noEnum: stored},
	{name: "mode upper case", value: `{"mode":"DISABLED"}`, want: []string{`"DISABLED"`, `did you mean "Disabled"`}, real: rejected, noEnum: stored},
	{name: "mode typo", value: `{"mode":"Enable"}`, want: []string{`mode is "Enable"`, `"Enabled" or "Disabled"`}, real: rejected, noEnum: stored},
	{name: "mode trailing space", value: `{"mode":"Enabled "}`, want: []string{`mode is "Enabled "`}, real: rejected, noEnum: stored},
	{name: "mode newline", value: `{"mode":"Enabled\n"}`, want: []string{`mode is "Enabled\n"`}, real: rejected, noEnum: stored},
	{name: "mode huge", value: `{"mode":"` + huge(256<<10) + `"}`, want: []string{`mode is "EEEE`, fmt.Sprintf("(%d bytes)", 256<<10+2)}, real: rejected, noEnum: stored},
	// The mode: wrong types.
	{name: "mode bool", value: `{"mode":true}`, want: []string{"mode is true"}, real: rejected, noEnum: rejected},
	{name: "mode number", value: `{"mode":1}`, want: []string{"mode is 1"}, real: rejected, noEnum: rejected},
	{name: "mode list", value: `{"mode":["Enabled"]}`, want: []string{`mode is ["Enabled"]`}, real: rejected, noEnum: rejected},
	{name: "mode object", value: `{"mode":{"value":"Enabled"}}`, want: []string{`mode is {"value":"Enabled"}`}, real: rejected, noEnum: rejected},
	// The field itself: wrong types.
	{name: "field string", value: `"Enabled"`, want: []string{"spec.kubernetesNMState must be an object", `got "Enabled"`}, real: rejected, noEnum: rejected},
	{name: "field bool", value: `true`, want: []string{"spec.kubernetesNMState must be an object", "got true"}, real: rejected, noEnum: rejected},
	{name: "field list", value: `[{"mode":"Enabled"}]`, want: []string{"spec.kubernetesNMState must be an object"}, real: rejected, noEnum: rejected},
	{name: "field number", value: `42`, want: []string{"spec.kubernetesNMState must be an object", "got 42"}, real: rejected, noEnum: rejected},
	// Unknown fields: a misspelt key must not silently mean "default".
	{name: "unknown field beside mode", value: `{"mode":"Enabled","Mode":"Disabled"}`, want: []string{`unknown field "Mode"`},
		real: pruned, noEnum: pruned, prunedTo: `{"mode":"Enabled"}`, prunedReason: nmstate.ReasonUserEnabled},
	{name: "misspelt mode", value: `{"mdoe":"Disabled"}`, want: []string{`unknown field "mdoe"`, "valid fields are mode, handlerPlacement"},
		real: rejected, noEnum: rejected}, // pruned to {}, which the CRD's minProperties refuses
	{name: "unknown placement field", value: `{"mode":"Enabled","handlerPlacement":{"nodeSelectors":{"a":"b"}}}`, want: []string{`handlerPlacement has an unknown field "nodeSelectors"`},
		real: rejected, noEnum: rejected}, // pruned to an empty handlerPlacement, which minProperties refuses
	{name: "unknown toleration field", value: `{"mode":"Enabled","handlerPlacement":{"tolerations":[{"key":"a","operator":"Exists","colour":"red"}]}}`, want: []string{"tolerations[0] is not a valid toleration", "colour"},
		real: pruned, noEnum: pruned, prunedTo: `{"mode":"Enabled","handlerPlacement":{"tolerations":[{"key":"a","operator":"Exists"}]}}`, prunedReason: nmstate.ReasonUserEnabled},
	// Placement: wrong types at every level.
	{name: "placement string", value: `{"handlerPlacement":"everywhere"}`, want: []string{"handlerPlacement must be an object", `got "everywhere"`}, real: rejected, noEnum: rejected},
	{name: "node selector list", value: `{"handlerPlacement":{"nodeSelector":["worker"]}}`, want: []string{"nodeSelector must be a map", `got ["worker"]`}, real: rejected, noEnum: rejected},
	{name: "node selector value number", value: `{"handlerPlacement":{"nodeSelector":{"role":1}}}`, want: []string{`nodeSelector["role"] must be a string, got 1`}, real: rejected, noEnum: rejected},
	{name: "node selector value nested", value: `{"handlerPlacement":{"nodeSelector":{"role":{"a":[1,{"b":null}]}}}}`, want: []string{`nodeSelector["role"] must be a string`}, real: rejected, noEnum: rejected},
	{name: "tolerations object", value: `{"handlerPlacement":{"tolerations":{"key":"a"}}}`, want: []string{"tolerations must be a list of tolerations"}, real: rejected, noEnum: rejected},
	{name: "toleration string", value: `{"handlerPlacement":{"tolerations":["NoSchedule"]}}`, want: []string{"tolerations[0] must be a toleration object", `got "NoSchedule"`}, real: rejected, noEnum: rejected},
	{name: "toleration key number", value: `{"handlerPlacement":{"tolerations":[{"key":7,"operator":"Exists"}]}}`, want: []string{"tolerations[0] is not a valid toleration"}, real: rejected, noEnum: rejected},
	{name: "toleration seconds string", value: `{"handlerPlacement":{"tolerations":[{"key":"a","effect":"NoExecute","tolerationSeconds":"30"}]}}`, want: []string{"tolerations[0] is not a valid toleration"}, real: rejected, noEnum: rejected},
	{name: "toleration seconds fraction", value: `{"handlerPlacement":{"tolerations":[{"key":"a","effect":"NoExecute","tolerationSeconds":1.5}]}}`, want: []string{"tolerations[0] is not a valid toleration"}, real: rejected, noEnum: rejected},
	// Placement: well-typed but invalid. The CRD's CEL rules refuse them
	// now; with no schema for the field only the host can catch them.
	{name: "label key with space", value: `{"handlerPlacement":{"nodeSelector":{"bad key!":""}}}`, want: []string{`invalid label key "bad key!"`}, real: rejected, noEnum: rejected},
	{name: "label key two slashes", value: `{"handlerPlacement":{"nodeSelector":{"a/b/c":"x"}}}`, want: []string{`invalid label key "a/b/c"`}, real: rejected, noEnum: rejected},
	{name: "label key huge", value: `{"handlerPlacement":{"nodeSelector":{"` + strings.Repeat("k", 100<<10) + `":""}}}`, want: []string{`invalid label key "kkkk`, fmt.Sprintf("(%d bytes)", 100<<10+2)}, real: rejected, noEnum: rejected},
	{name: "label value invalid", value: `{"handlerPlacement":{"nodeSelector":{"role":"has space"}}}`, want: []string{`invalid label value "has space"`}, real: rejected, noEnum: rejected},
	{name: "windows selector", value: `{"handlerPlacement":{"nodeSelector":{"kubernetes.io/os":"windows"}}}`, want: []string{`is "windows"`, `can only be "linux"`}, real: rejected, noEnum: rejected},
	{name: "toleration Equal without key", value: `{"handlerPlacement":{"tolerations":[{"operator":"Equal","value":"x"}]}}`, want: []string{`tolerations[0]: operator "Equal" needs a key`}, real: rejected, noEnum: rejected},
	{name: "toleration Exists with value", value: `{"handlerPlacement":{"tolerations":[{"key":"a","operator":"Exists","value":"x"}]}}`, want: []string{`operator "Exists" takes no value, got "x"`}, real: rejected, noEnum: rejected},
	{name: "toleration key invalid", value: `{"handlerPlacement":{"tolerations":[{"key":"bad key","operator":"Exists"}]}}`, want: []string{`key "bad key" is invalid`}, real: rejected, noEnum: rejected},
	{name: "toleration value invalid", value: `{"handlerPlacement":{"tolerations":[{"key":"a","value":"-x-"}]}}`, want: []string{`value "-x-" is invalid`}, real: rejected, noEnum: rejected},
	{name: "toleration seconds without NoExecute", value: `{"handlerPlacement":{"tolerations":[{"key":"a","operator":"Exists","effect":"NoSchedule","tolerationSeconds":30}]}}`, want: []string{"tolerationSeconds is only valid with effect \"NoExecute\""}, real: rejected, noEnum: rejected},
	{name: "toleration operator wrong case", value: `{"handlerPlacement":{"tolerations":[{"key":"a","operator":"exists"}]}}`, want: []string{`operator "exists" is invalid`}, real: rejected, noEnum: rejected},
	{name: "toleration effect unknown", value: `{"handlerPlacement":{"tolerations":[{"key":"a","operator":"Exists","effect":"NoWay"}]}}`, want: []string{`effect "NoWay" is invalid`}, real: rejected, noEnum: rejected},
	{name: "toleration key huge", value: `{"handlerPlacement":{"tolerations":[{"key":"` + strings.Repeat("k", 4096) + `","operator":"Exists"}]}}`, want: []string{`key "kkkk`, "is invalid"}, real: rejected, noEnum: rejected},
}

// permissiveNetworkCRD is the shipped Network CRD with no schema at all for
// spec.kubernetesNMState (x-kubernetes-preserve-unknown-fields, no type):
// the worst an old or hand-edited CRD could let through, so that wrong types
// at every level and unknown fields reach the host as sent.
func permissiveNetworkCRD(t *testing.T) string {
	t.Helper()
	path, err := devcluster.WritePermissiveNetworkCRD(techPreviewNetworkCRD, t.TempDir())
	require.NoError(t, err)
	return path
}

// setNMState replaces spec.kubernetesNMState with raw JSON.
func (k *cluster) setNMState(value string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(controller.NetworkGVK)
	obj.SetName("cluster")
	patch := `[{"op":"add","path":"/spec/kubernetesNMState","value":` + value + `}]`
	return k.c.Patch(k.ctx(), obj, client.RawPatch(types.JSONPatchType, []byte(patch)))
}

// storedNMState is spec.kubernetesNMState as the server holds it, as JSON.
func (k *cluster) storedNMState() string {
	k.t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(k.network().Object, "spec", "kubernetesNMState")
	require.NoError(k.t, err)
	data, err := json.Marshal(v)
	require.NoError(k.t, err)
	return string(data)
}

// deployed starts a cluster on BareMetal HA with mode Enabled (or the given
// network CRD), a host, and the real controllers' rollout on the sample
// bare-metal nodes, and returns the snapshot of everything rendered.
func deployed(t *testing.T, opt clusterOption, hostOpts ...hostOption) (*cluster, snapshot) {
	opt.nodes = devcluster.BareMetalNodes()
	k := startCluster(t, opt)
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(map[string]any{"mode": "Enabled"})
	k.startHost(hostOpts...)
	s := k.waitSnapshot(rendered(t, "", bareMetalHA))
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	return k, s
}

// TestFaultInvalidNetworkConfig sends every bad input through three schemas
// (the shipped CRD, the old one without the mode enum, and one with no
// schema for the field): whatever the server lets through, the host reports
// as InvalidConfig naming the bad value, keeps what is deployed running, and
// deletes nothing.
func TestFaultInvalidNetworkConfig(t *testing.T) {
	tried, reported, refused, prunedCount, lost := 0, 0, 0, 0, 0
	for _, schema := range []struct {
		name string
		crd  func(t *testing.T) string
		of   func(badInput) verdict
	}{
		{"shipped CRD", func(*testing.T) string { return "" }, func(b badInput) verdict { return b.real }},
		{"CRD without the mode enum", func(*testing.T) string { return "testdata/crds/networks-no-enum.crd.yaml" }, func(b badInput) verdict { return b.noEnum }},
		{"CRD without a schema for the field", permissiveNetworkCRD, func(badInput) verdict { return stored }},
	} {
		t.Run(schema.name, func(t *testing.T) {
			reconciles := &reconcileCounter{}
			k, deployedObjs := deployed(t, clusterOption{networkCRD: schema.crd(t)}, reconciles.option())
			baseline := k.storedNMState()
			for _, in := range badInputs {
				t.Run(in.name, func(t *testing.T) {
					tried++
					// Wait for the host only when the server stored a change:
					// a refused value, or one pruned to what is already
					// stored, makes no event to react to.
					rv := k.network().GetResourceVersion()
					reconciled := reconciles.n.Load()
					err := k.setNMState(in.value)
					if k.network().GetResourceVersion() != rv {
						require.True(t, waitUntil(func() bool { return reconciles.n.Load() > reconciled }), "no reconcile after the change to %q (%d before and since)", in.value, reconciled)
					}
					switch v := schema.of(in); v {
					case rejected:
						refused++
						require.Error(t, err, "the schema should refuse it")
						assert.True(t, apierrors.IsInvalid(err) || apierrors.IsBadRequest(err), "refused as invalid: %.300v", err)
						assert.Equal(t, baseline, k.storedNMState(), "nothing was stored")
						assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
					case pruned:
						prunedCount++
						require.NoError(t, err)
						assert.JSONEq(t, in.prunedTo, k.storedNMState(), "what the schema keeps")
						k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, in.prunedReason)
						assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
					case stored:
						reported++
						require.NoError(t, err, "the schema should let it through")
						assert.JSONEq(t, in.value, k.storedNMState(), "stored as sent")
						msg := k.waitDegraded(nmstate.ReasonInvalidConfig, in.want...)
						assert.LessOrEqual(t, len(msg), conditionMessageLimit, "the message is bounded: %.200s", msg)
						assert.Contains(t, msg, "nothing on the cluster was changed")
						c := k.conditions()
						assert.Equal(t, nmstate.ReasonKeptDeployed, c[nmstate.ConditionAvailable].Reason, "the handler keeps running")
						assert.Equal(t, operv1.ConditionTrue, c[nmstate.ConditionAvailable].Status)
						ds := &appsv1.DaemonSet{}
						require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
						assert.Equal(t, handlerImage, ds.Spec.Template.Spec.Containers[0].Image)
					default:
						t.Fatalf("unknown verdict %v", v)
					}
					gone := k.lost(deployedObjs)
					lost += len(gone)
					assert.Empty(t, gone, "objects deleted or recreated")

					// Back to the baseline before the next input, so that each
					// one is seen on its own.
					require.NoError(t, k.setNMState(`{"mode":"Enabled"}`))
					k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
					k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)
				})
			}
		})
	}
	t.Logf("bad Network inputs tried: %d (%d distinct, through 3 schemas): %d refused by the schema, %d pruned to a valid config, %d reported by the host as InvalidConfig; objects lost: %d",
		tried, len(badInputs), refused, prunedCount, reported, lost)
}

// TestFaultInfrastructure: the Infrastructure without a platform, with one
// this release does not know, or missing altogether. None of these is an
// error: kubernetes-nmstate is optional, so it must never fail CNO. The
// shipped Infrastructure CRD enum-restricts the platform and topologies, so
// unknown values are first shown to be refused by the server, then sent
// through the same CRD with the enums removed (as a newer or older API could
// have it). Each case is waited on through the Available message, which
// names the platform, so no check runs before the host has seen the change.
func TestFaultInfrastructure(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(map[string]any{"mode": "Enabled"})
	k.startHost()
	s := k.waitSnapshot(rendered(t, modeEnabled, bareMetalHA))
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)

	setStatus := func(f func(*configv1.InfrastructureStatus)) error {
		infra := &configv1.Infrastructure{}
		if err := k.c.Get(k.ctx(), client.ObjectKey{Name: "cluster"}, infra); err != nil {
			return err
		}
		f(&infra.Status)
		return k.c.Status().Update(k.ctx(), infra)
	}
	healthy := func(t *testing.T) {
		t.Helper()
		require.NoError(t, setStatus(func(st *configv1.InfrastructureStatus) {
			st.Platform = configv1.BareMetalPlatformType
			st.PlatformStatus = &configv1.PlatformStatus{Type: configv1.BareMetalPlatformType}
			st.ControlPlaneTopology, st.InfrastructureTopology = ha, ha
		}))
		k.waitAvailableMessage(operv1.ConditionTrue, nmstate.ReasonUserEnabled, "platform BareMetal, control plane topology HighlyAvailable")
	}
	tried, lost := 0, 0
	// With mode Enabled, whatever the Infrastructure says, everything keeps
	// running and nothing is Degraded.
	check := func(t *testing.T, platformInMessage string) {
		t.Helper()
		tried++
		k.waitAvailableMessage(operv1.ConditionTrue, nmstate.ReasonUserEnabled, platformInMessage)
		assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
		gone := k.lost(s)
		lost += len(gone)
		assert.Empty(t, gone, "objects deleted or recreated")
	}

	t.Run("no platformStatus and no platform", func(t *testing.T) {
		require.NoError(t, setStatus(func(st *configv1.InfrastructureStatus) { st.PlatformStatus, st.Platform = nil, "" }))
		check(t, "platform not reported by infrastructures.config.openshift.io/cluster")
		healthy(t)
	})
	t.Run("empty platformStatus.type, legacy status.platform", func(t *testing.T) {
		// Clusters installed before 4.2: only the deprecated field.
		require.NoError(t, setStatus(func(st *configv1.InfrastructureStatus) {
			st.PlatformStatus = &configv1.PlatformStatus{}
			st.Platform = configv1.VSpherePlatformType
		}))
		check(t, "platform VSphere,")
		healthy(t)
	})
	unknown := map[string]func(*configv1.InfrastructureStatus){
		"platform Metal3": func(st *configv1.InfrastructureStatus) {
			st.PlatformStatus = &configv1.PlatformStatus{Type: "Metal3"}
			st.Platform = "Metal3"
		},
		"control plane topology Quorum": func(st *configv1.InfrastructureStatus) { st.ControlPlaneTopology = "Quorum" },
		"infrastructure topology DualReplica": func(st *configv1.InfrastructureStatus) {
			st.InfrastructureTopology = configv1.DualReplicaTopologyMode
		},
	}
	t.Run("unknown values are refused by the shipped CRD", func(t *testing.T) {
		for name, f := range unknown {
			err := setStatus(f)
			require.Error(t, err, name)
			assert.True(t, apierrors.IsInvalid(err), "%s: %v", name, err)
			assert.Contains(t, err.Error(), "Unsupported value", name)
		}
	})

	// The same CRD without the enums.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, k.c.Get(k.ctx(), client.ObjectKey{Name: "infrastructures.config.openshift.io"}, crd))
	status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	for _, field := range []string{"platform", "controlPlaneTopology", "infrastructureTopology"} {
		p := status.Properties[field]
		require.NotEmpty(t, p.Enum, "%s has an enum", field)
		p.Enum = nil
		status.Properties[field] = p
	}
	ps := status.Properties["platformStatus"]
	typ := ps.Properties["type"]
	typ.Enum = nil
	ps.Properties["type"] = typ
	status.Properties["platformStatus"] = ps
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = status
	require.NoError(t, k.c.Update(k.ctx(), crd), "removing the Infrastructure enums")

	for name, want := range map[string]string{
		"platform Metal3":                     `platform "Metal3" (unknown to this release)`,
		"control plane topology Quorum":       "control plane topology Quorum,",
		"infrastructure topology DualReplica": "infrastructure topology DualReplica,",
	} {
		t.Run(name, func(t *testing.T) {
			// The API server takes a moment to serve the new schema.
			var err error
			require.True(t, waitUntil(func() bool { err = setStatus(unknown[name]); return err == nil }), "the relaxed CRD never accepted it: %v", err)
			check(t, want)
			healthy(t)
		})
	}

	t.Run("missing", func(t *testing.T) {
		require.NoError(t, k.c.Delete(k.ctx(), &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}))
		check(t, "platform unknown (there is no infrastructures.config.openshift.io/cluster)")
	})
	assert.Empty(t, k.lost(s))
	t.Logf("unreadable Infrastructure inputs tried with mode Enabled: %d; objects lost: %d", tried, lost)

	// Still no Infrastructure: the platform default is off, so the running
	// handler is kept while it has a policy to enforce, and Disabled
	// removes it; neither is Degraded, and the CRDs and the policy stay.
	t.Run("missing, mode omitted and Disabled", func(t *testing.T) {
		k.createPolicy("vlan100")
		// The CRD wants at least one property in kubernetesNMState, so
		// "omitted" drops the whole field.
		k.patchNetwork(`{"spec":{"kubernetesNMState":null}}`)
		c := k.waitAvailableContaining("keeps running because 1 NodeNetworkConfigurationPolicy would otherwise no longer be enforced")
		assert.Contains(t, c.Message, "platform unknown (there is no infrastructures.config.openshift.io/cluster)")
		assert.Empty(t, k.lost(s), "the handler is kept, not recreated")
		assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)

		k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
		k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
		k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
		assert.Equal(t, operv1.ConditionFalse, k.conditions()[nmstate.ConditionDegraded].Status)
		for _, name := range nmstate.CRDNames() {
			assert.True(t, k.crdKept(name), "CRD %s kept", name)
		}
		assert.Equal(t, []string{"vlan100"}, nncpNames(t, k), "the policy is kept")
	})
}

// waitAvailableMessage waits for KubernetesNMStateAvailable with status and
// reason and a message containing substring.
func (k *cluster) waitAvailableMessage(status operv1.ConditionStatus, reason, substring string) {
	k.t.Helper()
	var last operv1.OperatorCondition
	ok := waitUntil(func() bool {
		last = k.conditions()[nmstate.ConditionAvailable]
		return last.Status == status && last.Reason == reason && strings.Contains(last.Message, substring)
	})
	require.True(k.t, ok, "Available never became %s/%s with %q; last: %s/%s: %.400s", status, reason, substring, last.Status, last.Reason, last.Message)
}

// TestFaultMissingImage: CNO restarts without KUBERNETES_NMSTATE_HANDLER_IMAGE
// in its environment (a broken Deployment edit, an upgrade gone wrong). The
// new host has applied nothing yet; it must still not prune or re-render.
func TestFaultMissingImage(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	stop := k.runHost(k.cfg)
	s := k.waitSnapshot(rendered(t, "", bareMetalHA))
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	require.NoError(t, stop())

	noImage := func(o *controller.Options) { o.Images.Handler = "" }
	reconciles := &reconcileCounter{}
	stop = k.runHost(k.cfg, noImage, reconciles.option())
	msg := k.waitDegraded(nmstate.ReasonMissingImage, nmstate.EnvHandlerImage, "nothing on the cluster was changed")
	assert.Contains(t, msg, "no kubernetes-nmstate handler image")
	assert.Equal(t, nmstate.ReasonKeptDeployed, k.conditions()[nmstate.ConditionAvailable].Reason)
	// Another reconcile, on an edit of the Network: still nothing deleted.
	reconciles.after(t, func() { k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`) })
	k.waitDegraded(nmstate.ReasonMissingImage, nmstate.EnvHandlerImage)
	gone := k.lost(s)
	assert.Empty(t, gone, "objects deleted or recreated")
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.Equal(t, handlerImage, ds.Spec.Template.Spec.Containers[0].Image, "the running image is kept")
	require.NoError(t, stop())

	// The environment fixed: healthy again, the same objects.
	k.runHost(k.cfg)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	assert.Empty(t, k.lost(s))
	t.Logf("objects lost: %d", len(gone))
}

// faultInjector fails a fraction of the requests that pass through it, with
// a seeded RNG: 409 Conflict, 429 with Retry-After, 500, and timeouts, half
// of them before the request reaches the server and half after (the write
// happened, the answer was lost).
type faultInjector struct {
	rate    float64
	active  atomic.Bool
	mu      sync.Mutex
	rng     *rand.Rand
	faults  map[string]int
	total   int
	deletes []string // DELETEs the server received
	// degradedWrites counts status writes that set Degraded=True/Failed.
	degradedWrites atomic.Int32
}

var faultKinds = []string{"409 Conflict", "429 Too Many Requests", "500 Internal Server Error", "timeout before sending", "timeout after sending"}

func newFaultInjector(seed uint64, rate float64) *faultInjector {
	f := &faultInjector{rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), faults: map[string]int{}}
	f.active.Store(true)
	return f
}

type injectedTimeout struct{}

func (injectedTimeout) Error() string   { return "injected: i/o timeout" }
func (injectedTimeout) Timeout() bool   { return true }
func (injectedTimeout) Temporary() bool { return true }

func statusResponse(req *http.Request, code int, reason metav1.StatusReason, header http.Header) *http.Response {
	body, _ := json.Marshal(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reason, Message: "injected fault"})
	if header == nil {
		header = http.Header{}
	}
	header.Set("Content-Type", "application/json")
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: header, Body: io.NopCloser(strings.NewReader(string(body))),
		ContentLength: int64(len(body)), Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}

func (f *faultInjector) wrap(rt http.RoundTripper) http.RoundTripper {
	return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		f.mu.Lock()
		f.total++
		fault := ""
		if f.active.Load() && f.rng.Float64() < f.rate {
			fault = faultKinds[f.rng.IntN(len(faultKinds))]
			f.faults[fault]++
		}
		f.mu.Unlock()
		switch fault {
		case "409 Conflict":
			return statusResponse(req, http.StatusConflict, metav1.StatusReasonConflict, nil), nil
		case "429 Too Many Requests":
			return statusResponse(req, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, http.Header{"Retry-After": []string{"1"}}), nil
		case "500 Internal Server Error":
			return statusResponse(req, http.StatusInternalServerError, metav1.StatusReasonInternalError, nil), nil
		case "timeout before sending":
			select {
			case <-time.After(50 * time.Millisecond):
			case <-req.Context().Done():
			}
			return nil, injectedTimeout{}
		}
		if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/networks/cluster/status") && req.Body != nil {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, fmt.Errorf("reading the status patch: %w", err)
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"reason":"`+nmstate.ReasonFailed+`"`)) {
				f.degradedWrites.Add(1)
			}
		}
		resp, err := rt.RoundTrip(req)
		if err == nil && req.Method == http.MethodDelete {
			f.mu.Lock()
			f.deletes = append(f.deletes, req.URL.Path)
			f.mu.Unlock()
		}
		if fault == "timeout after sending" && err == nil {
			// The headers are back, so the server has acted; the client
			// never hears of it. (Not drained: a watch body never ends.)
			resp.Body.Close()
			return nil, injectedTimeout{}
		}
		return resp, err
	})
}

func (f *faultInjector) report() (total int, faults map[string]int, deletes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.faults {
		out[k] = v
	}
	return f.total, out, append([]string{}, f.deletes...)
}

// TestFaultAPIFaults runs the host with a quarter of its requests failing,
// watches included, the whole time: it enables, is disabled and enables
// again; each time it converges, and the only objects it ever deletes are the
// ones disabling removes.
func TestFaultAPIFaults(t *testing.T) {
	runAPIFaults(t, 20261202, 0.25)
}

func runAPIFaults(t *testing.T, seed uint64, rate float64, opts ...hostOption) {
	// With a quarter of all requests failing, a condition turns AsExpected
	// only in a reconcile whose eight or so uncached requests all succeed
	// (one in ten), after 2 s back-offs, and every rendered object adds
	// applies and prune deletes that fail as often. With the 36 objects of
	// an HA cluster, seeds 1 to 5 and this test's converged through the
	// three steps in 25 s to 75 s; 30 s per step was too short for some
	// (wait is longer now).
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	faults := newFaultInjector(seed, rate)
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = faults.wrap
	// Creating the manager needs discovery, and fails on a fault: a real
	// process would exit and be restarted. The faults start once it runs.
	faults.active.Store(false)
	k.startHostWith(cfg, opts...)
	faults.active.Store(true)
	hostStart := time.Now()
	objs := rendered(t, "", bareMetalHA)

	s := k.waitSnapshot(objs)
	// The real controllers may finish the rollout before the host reports
	// it under way, so only the end is waited for.
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	_, _, deletes := faults.report()
	assert.Empty(t, deletes, "deletes while enabling")
	assert.Empty(t, k.lost(s))

	for name := range policies {
		k.createPolicy(name)
	}
	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	var prunable []string
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if nmstate.KeptOnDisable(gvk.Group, gvk.Kind, obj.GetName()) {
			continue
		}
		prunable = append(prunable, obj.GetName())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		require.True(t, waitUntil(func() bool {
			return apierrors.IsNotFound(k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got))
		}), "%s was not pruned", obj.GetName())
	}
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	// Counting the policies may have failed on a fault; a later reconcile counts them.
	require.True(t, waitUntil(func() bool {
		return strings.Contains(k.conditions()[nmstate.ConditionAvailable].Message, "3 NodeNetworkConfigurationPolicies exist and are not enforced")
	}), "the kept policies were never counted: %+v", k.conditions()[nmstate.ConditionAvailable])

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`)
	again := k.waitSnapshot(objs)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	converged := time.Since(hostStart)

	total, injected, deletes := faults.report()
	faults.active.Store(false)
	degradedWrites := faults.degradedWrites.Load()
	// What must stay stayed: the CRDs, the namespace, every policy.
	for key, uid := range s.uid {
		if s.gvk[key].Kind == "CustomResourceDefinition" || s.gvk[key].Kind == "Namespace" {
			assert.Equal(t, uid, again.uid[key], "%s was recreated", key)
		}
	}
	assert.ElementsMatch(t, []string{"bond0", "vlan100", "br-ex2"}, nncpNames(t, k))
	// The only deletes that reached the server were of pruned objects.
	for _, path := range deletes {
		name := path[strings.LastIndex(path, "/")+1:]
		assert.Contains(t, prunable, name, "the host deleted %s", path)
		assert.NotContains(t, path, "customresourcedefinitions")
		assert.NotContains(t, path, "nodenetworkconfigurationpolicies")
	}
	sum := 0
	for _, kind := range faultKinds {
		sum += injected[kind]
		assert.Positive(t, injected[kind], "no %s was injected", kind)
	}
	// Within FailureGrace, a fault is retried, not reported.
	assert.Zero(t, degradedWrites, "transient faults reported as Degraded=True/Failed")
	t.Logf("seed %d, rate %.2f: %d faults injected in %d host requests (%v); converged through enable, disable, enable in %s; deletes: %d, all of pruned objects; objects lost: 0; transient faults reported as Degraded=True/Failed %d times",
		seed, rate, sum, total, injected, converged.Round(time.Millisecond), len(deletes), degradedWrites)
}

// applyGate lets the first limit apply PATCHes through and holds every later
// one until its request is cancelled: a host killed in the middle of applying.
type applyGate struct {
	limit   int32
	applies atomic.Int32
	held    atomic.Int32
}

func (g *applyGate) wrap(rt http.RoundTripper) http.RoundTripper {
	return devcluster.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		isApply := req.Method == http.MethodPatch && strings.Contains(req.Header.Get("Content-Type"), "apply-patch") && !strings.HasSuffix(req.URL.Path, "/status")
		if isApply && g.applies.Add(1) > g.limit {
			g.held.Add(1)
			<-req.Context().Done()
			return nil, fmt.Errorf("held by the test until the host stopped: %w", req.Context().Err())
		}
		return rt.RoundTrip(req)
	})
}

// TestFaultRestartMidApply stops a host after about half of the objects are
// applied; a fresh host (nothing in memory) finishes the job: the objects the
// first one created keep their UIDs, none is duplicated, nothing is lost.
func TestFaultRestartMidApply(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	objs := rendered(t, "", bareMetalHA)
	gate := &applyGate{limit: int32(len(objs) / 2)}
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = gate.wrap
	stop := k.runHost(cfg)
	require.True(t, waitUntil(func() bool { return gate.held.Load() > 0 }), "the host never reached the held apply; its conditions: %+v", k.conditions())

	// What the first host managed: the first half, in render order.
	var firstHalf []*unstructured.Unstructured
	for _, obj := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got) == nil {
			firstHalf = append(firstHalf, obj)
		}
	}
	require.Len(t, firstHalf, int(gate.limit), "exactly the applies let through exist")
	before := k.waitSnapshot(firstHalf)
	// The CRDs come first, so a user can already have a policy.
	k.createPolicy("vlan100")
	require.NoError(t, stop(), "the host stops with an apply in flight")

	k.runHost(k.cfg)
	after := k.waitSnapshot(objs)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionTrue, nmstate.ReasonRollingOut)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	for key, uid := range before.uid {
		assert.Equal(t, uid, after.uid[key], "%s was recreated", key)
	}
	// No duplicates: per kind, exactly as many labelled objects as rendered.
	want := map[string]int{}
	for _, obj := range objs {
		want[obj.GetAPIVersion()+"/"+obj.GetKind()]++
	}
	for gvk, n := range want {
		list := &unstructured.UnstructuredList{}
		parts := strings.Split(gvk, "/")
		list.SetAPIVersion(strings.Join(parts[:len(parts)-1], "/"))
		list.SetKind(parts[len(parts)-1] + "List")
		require.NoError(t, k.c.List(k.ctx(), list, client.HasLabels{nmstate.OwnerLabel}))
		assert.Len(t, list.Items, n, "%s with the owner label", gvk)
	}
	assert.Equal(t, []string{"vlan100"}, nncpNames(t, k))
	t.Logf("first host applied %d of %d objects and was stopped with %d apply held; the second kept all %d UIDs; objects lost: 0",
		gate.limit, len(objs), gate.held.Load(), len(before.uid))
}

// dsWatch follows the handler DaemonSets in every namespace and remembers
// the most that ever existed at once.
type dsWatch struct {
	mu      sync.Mutex
	live    map[types.UID]string
	max     int
	added   int
	deleted int
	other   []string // deletions of what must stay
}

func (w *dsWatch) follow(t *testing.T, ctx context.Context, k *cluster) {
	t.Helper()
	wc, err := client.NewWithWatch(k.cfg, client.Options{Scheme: k.c.Scheme()})
	require.NoError(t, err)
	ds, err := wc.Watch(ctx, &appsv1.DaemonSetList{}, client.MatchingLabels{"component": "kubernetes-nmstate-handler"})
	require.NoError(t, err, "watching handler DaemonSets")
	crds, err := wc.Watch(ctx, &apiextensionsv1.CustomResourceDefinitionList{})
	require.NoError(t, err, "watching CRDs")
	policyList := &unstructured.UnstructuredList{}
	policyList.SetAPIVersion("nmstate.io/v1")
	policyList.SetKind("NodeNetworkConfigurationPolicyList")
	nncps, err := wc.Watch(ctx, policyList)
	require.NoError(t, err, "watching policies")
	go func() {
		defer ds.Stop()
		defer crds.Stop()
		defer nncps.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-ds.ResultChan():
				if !ok {
					return
				}
				obj, isDS := ev.Object.(*appsv1.DaemonSet)
				if !isDS {
					continue
				}
				w.mu.Lock()
				switch ev.Type {
				case watch.Added:
					w.live[obj.UID] = obj.Namespace + "/" + obj.Name
					w.added++
				case watch.Deleted:
					delete(w.live, obj.UID)
					w.deleted++
				}
				w.max = max(w.max, len(w.live))
				w.mu.Unlock()
			case ev, ok := <-crds.ResultChan():
				if ok && ev.Type == watch.Deleted {
					w.mu.Lock()
					w.other = append(w.other, fmt.Sprintf("CRD %v", ev.Object.(client.Object).GetName()))
					w.mu.Unlock()
				}
			case ev, ok := <-nncps.ResultChan():
				if ok && ev.Type == watch.Deleted {
					w.mu.Lock()
					w.other = append(w.other, fmt.Sprintf("policy %v", ev.Object.(client.Object).GetName()))
					w.mu.Unlock()
				}
			}
		}
	}()
}

// TestFaultFlapping: 100 alternating Disabled/Enabled patches with three
// policies in place. The end state is the last mode's, every policy and CRD
// survives, and never do two handler DaemonSets exist at once.
func TestFaultFlapping(t *testing.T) {
	reconciles := &reconcileCounter{}
	k, s := deployed(t, clusterOption{}, reconciles.option())
	for name := range policies {
		k.createPolicy(name)
	}
	w := &dsWatch{live: map[types.UID]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.follow(t, ctx, k)
	added := 0
	require.True(t, waitUntil(func() bool { w.mu.Lock(); defer w.mu.Unlock(); added = w.added; return added == 1 }), "the watch saw %d handlers added, not 1", added)

	start := time.Now()
	const patches = 100
	mode := ""
	for i := 1; i <= patches; i++ {
		mode = "Disabled"
		if i%2 == 0 {
			mode = "Enabled"
		}
		patch := func() { k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"` + mode + `"}}}`) }
		if i < patches {
			patch()
			time.Sleep(10 * time.Millisecond) // a flapping user, not a wait for the host
		} else {
			reconciles.after(t, patch) // the host has seen the last one
		}
	}
	flapped := time.Since(start)
	require.Equal(t, "Enabled", mode, "an even number of patches ends where it started")

	k.waitSnapshot(rendered(t, "", bareMetalHA))
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	// The reconcile counted after the last patch may have begun before it
	// and read the previous mode: the last mode's conditions come with the
	// next one, which the patch's own event queued.
	k.waitAvailableContaining("enabled by spec.kubernetesNMState.mode")
	// A reconcile started after the last patch has finished: this is the
	// final state, and it must be the last mode's.
	assert.True(t, k.exists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.True(t, k.exists(&appsv1.Deployment{}, nmstate.Namespace, nmstate.WebhookDeployment))
	assert.ElementsMatch(t, []string{"bond0", "vlan100", "br-ex2"}, nncpNames(t, k))
	for _, crd := range nmstate.CRDNames() {
		assert.True(t, k.crdKept(crd), crd)
	}
	var keptLost []string
	for _, key := range k.lost(s) {
		if strings.HasPrefix(key, "CustomResourceDefinition ") || strings.HasPrefix(key, "Namespace ") {
			keptLost = append(keptLost, key)
		}
	}
	assert.Empty(t, keptLost, "kept objects deleted or recreated")

	w.mu.Lock()
	defer w.mu.Unlock()
	// The watch spans every namespace: a second handler anywhere counts.
	assert.Equal(t, 1, w.max, "handler DaemonSets (in any namespace) that existed at the same time")
	assert.Positive(t, w.deleted, "the flapping never removed the handler: the test did not flap")
	assert.Equal(t, w.added, w.deleted+1, "one handler remains")
	assert.Empty(t, w.other, "deleted during the flapping")
	t.Logf("%d patches in %s: handler DaemonSet created %d and deleted %d times, at most %d at once; policies and CRDs deleted: %d",
		patches, flapped.Round(time.Millisecond), w.added, w.deleted, w.max, len(w.other))
}
