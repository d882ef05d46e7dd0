package nmstate

import (
	"errors"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Render is the one call of CNO, the host and `cno-nmstate render`: each row
// is what one of its inputs changes.
func TestRenderInput(t *testing.T) {
	bareMetal := Infrastructure{Platform: configv1.BareMetalPlatformType}
	aws := Infrastructure{Platform: configv1.AWSPlatformType}
	images := Images{Handler: "example.com/handler:1", ReleaseVersion: "4.99.0"}
	withConditions := func(n *unstructured.Unstructured, conds ...operv1.OperatorCondition) *unstructured.Unstructured {
		var raw []any
		for _, c := range conds {
			raw = append(raw, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
				"lastTransitionTime": "2026-12-07T00:00:00Z"})
		}
		require.NoError(t, unstructured.SetNestedSlice(n.Object, raw, "status", "conditions"))
		return n
	}
	ownHandler := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: HandlerDaemonSet}}
	adopted := ownHandler.DeepCopy()
	adopted.OwnerReferences = []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "u", Controller: ptr.To(true)}}
	readErr := errors.New("counting NodeNetworkConfigurationPolicies: timeout")

	tests := []struct {
		name       string
		in         Input
		reason     string
		objects    bool   // some objects rendered
		errReason  string // ReasonOf(Result.Err); "" for none
		errMessage string
	}{
		{name: "bare metal, mode omitted, gate on: on by default",
			in:     Input{Network: network(nil), Infrastructure: bareMetal, DefaultOnGate: true, Images: images},
			reason: ReasonPlatformDefault, objects: true},
		{name: "the gate off: off",
			in:     Input{Network: network(nil), Infrastructure: bareMetal, Images: images},
			reason: ReasonDefaultGateOff},
		{name: "empty topologies are highly available",
			in:     Input{Network: network(nil), Infrastructure: Infrastructure{Platform: configv1.NonePlatformType}, DefaultOnGate: true, Images: images},
			reason: ReasonPlatformDefault, objects: true},
		{name: "a bad mode stops it, naming the value",
			in:        Input{Network: withNMState(map[string]any{"mode": "enabled"}), Infrastructure: bareMetal, DefaultOnGate: true, Images: images},
			errReason: ReasonInvalidConfig, errMessage: `"enabled"`},
		{name: "a failed read stops it",
			in:        Input{Network: network(nil), Infrastructure: bareMetal, DefaultOnGate: true, Images: images, State: State{Err: readErr}},
			errReason: ReasonFailed, errMessage: "timeout"},
		{name: "no image while on",
			in:        Input{Network: network(nil), Infrastructure: bareMetal, DefaultOnGate: true},
			reason:    ReasonPlatformDefault,
			errReason: ReasonMissingImage, errMessage: EnvHandlerImage},
		{name: "another manager defers it",
			in: Input{Network: withNMState(map[string]any{"mode": "Enabled"}), Infrastructure: bareMetal, DefaultOnGate: true, Images: images,
				State: State{Other: Other{ManagedBy: standaloneOperator}}},
			reason: ReasonManagedElsewhere},
		{name: "AWS, its own handler running with policies: kept",
			in: Input{Network: network(nil), Infrastructure: aws, DefaultOnGate: true, Images: images,
				State: State{Handler: ownHandler, Policies: 2}},
			reason: ReasonKeptForExistingPolicies, objects: true},
		{name: "AWS, a handler the standalone operator adopted, with policies: not the plugin's to keep",
			in: Input{Network: network(nil), Infrastructure: aws, DefaultOnGate: true, Images: images,
				State: State{Handler: adopted, Policies: 2}},
			reason: ReasonPlatformNotDefault},
		{name: "AWS, no handler, but the policies CRD says it last ran it, with policies: kept",
			in: Input{Network: network(nil), Infrastructure: aws, DefaultOnGate: true, Images: images,
				State: State{Policies: 2, Installed: true, HandlerOn: true}},
			reason: ReasonKeptForExistingPolicies, objects: true},
		{name: "AWS, no handler, the Network's conditions say it ran but the policies CRD does not: off",
			in: Input{Network: withConditions(network(nil), operv1.OperatorCondition{Type: ConditionAvailable, Status: operv1.ConditionTrue,
				Reason: ReasonKeptForExistingPolicies}), Infrastructure: aws, DefaultOnGate: true, Images: images, State: State{Policies: 2, Installed: true}},
			reason: ReasonPlatformNotDefault, objects: true},
		{name: "AWS, installed before, off: what is kept is restored",
			in: Input{Network: network(nil), Infrastructure: aws, DefaultOnGate: true, Images: images,
				State: State{Installed: true}},
			reason: ReasonPlatformNotDefault, objects: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.ManifestDir = manifestDir
			res := Render(tt.in)
			assert.Equal(t, tt.reason, res.Decision.Reason, "%s", res.Decision.Message)
			assert.Equal(t, tt.objects, len(res.Objects) > 0, "%d objects", len(res.Objects))
			if tt.errReason == "" {
				require.NoError(t, res.Err)
				assert.Equal(t, decideWithCarryOver(mustConfig(t, tt.in.Network), newCluster(tt.in)), res.Decision)
				return
			}
			require.Error(t, res.Err)
			assert.Equal(t, tt.errReason, ReasonOf(res.Err), "%v", res.Err)
			assert.Contains(t, res.Err.Error(), tt.errMessage)
			assert.Empty(t, res.Objects, "nothing rendered after an error")
		})
	}
}

func mustConfig(t *testing.T, network *unstructured.Unstructured) Config {
	t.Helper()
	cfg, err := ConfigFromNetwork(network)
	require.NoError(t, err)
	return cfg
}

// The conditions on the Network's status, as Render and the host read them.
func TestNetworkConditions(t *testing.T) {
	assert.Nil(t, NetworkConditions(nil))
	assert.Nil(t, NetworkConditions(network(nil)))
	n := network(nil)
	n.Object["status"] = map[string]any{"conditions": []any{
		map[string]any{"type": ConditionAvailable, "status": "True", "reason": ReasonUserEnabled, "message": "m"},
		"not a condition",
		map[string]any{"type": int64(42)},
	}}
	got := NetworkConditions(n)
	require.Len(t, got, 1, "what does not parse is left out: %+v", got)
	assert.Equal(t, operv1.OperatorCondition{Type: ConditionAvailable, Status: operv1.ConditionTrue, Reason: ReasonUserEnabled, Message: "m"}, got[0])
}

// While the decision does not run the workloads, what is left of them (the
// workloads, deleted or adopted, or their pods) holds their accounts and
// RBAC back; while the plugin's own go and their last pods end, the
// consumer looks again soon, but not for another's or one a finalizer
// holds. While on, nothing is held.
func TestRenderWorkloadsRemain(t *testing.T) {
	ownHandler := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: HandlerDaemonSet}}
	webhook := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: WebhookDeployment}}
	adopted := ownHandler.DeepCopy()
	adopted.OwnerReferences = []metav1.OwnerReference{{APIVersion: "nmstate.io/v1", Kind: "NMState", Name: "nmstate", UID: "u", Controller: ptr.To(true)}}
	finalized := ownHandler.DeepCopy()
	finalized.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	finalized.Finalizers = []string{"example.com/hold"}
	disabled := map[string]any{"kubernetesNMState": map[string]any{"mode": "Disabled"}}
	tests := []struct {
		name    string
		spec    map[string]any
		state   State
		remain  bool
		recheck time.Duration
	}{
		{"off, nothing left", disabled, State{Installed: true}, false, 0},
		{"off, the handler still there", disabled, State{Installed: true, Handler: ownHandler, Pods: -1}, true, RemovalRecheck},
		{"off, the webhook still there", disabled, State{Installed: true, Webhook: webhook, Pods: -1}, true, RemovalRecheck},
		{"off, both gone, 3 pods ending", disabled, State{Installed: true, Pods: 3}, true, RemovalRecheck},
		{"off, the handler adopted by another manager", disabled, State{Installed: true, Handler: adopted, Pods: -1}, true, 0},
		{"off, the handler held by a finalizer", disabled, State{Installed: true, Handler: finalized, Pods: -1}, true, 0},
		{"on", nil, State{Installed: true, Handler: ownHandler, Webhook: webhook, Pods: -1, Accounts: Accounts{Accounts: map[string]Stamped{
			"nmstate-handler": {UID: "h"}, "nmstate-webhook": {UID: "w"}, "nmstate-metrics": {UID: "m"}}}}, false, 0},
		{"on, an account missing", nil, State{Installed: true, Handler: ownHandler, Webhook: webhook, Pods: -1, Accounts: Accounts{Accounts: map[string]Stamped{
			"nmstate-handler": {UID: "h"}, "nmstate-webhook": {UID: "w"}}}}, false, AccountRecheck},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Render(Input{Network: network(tt.spec), Infrastructure: Infrastructure{Platform: configv1.BareMetalPlatformType},
				DefaultOnGate: true, Images: Images{Handler: "img"}, State: tt.state, ManifestDir: manifestDir})
			require.NoError(t, res.Err)
			assert.Equal(t, tt.remain, res.WorkloadsRemain)
			assert.Equal(t, tt.recheck, res.RecheckAfter)
		})
	}
}
