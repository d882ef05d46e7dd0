package nmstate

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tests in this file pin the edges of the package's limits and
// comparisons, one value on each side, so that an off-by-one (a < for a <=, a
// lost "not") changes a result; `make mutation` checks that they do.

func TestBoundedNameLimit(t *testing.T) {
	letters := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name, in, want string
	}{
		{"enum value", "HighlyAvailable", "HighlyAvailable"},
		{"empty is kept", "", ""},
		{"32 letters are the most kept as they are", letters(32), letters(32)},
		{"33 letters are quoted", letters(33), `"` + letters(33) + `"`},
		{"a digit is quoted", "Replica3", `"Replica3"`},
		{"a leading digit is quoted", "3Replicas", `"3Replicas"`},
		{"a space is quoted", "a b", `"a b"`},
		{"a non-ASCII letter is a letter", "Hochverfügbar", "Hochverfügbar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, boundedName(tt.in))
			c := cluster{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.TopologyMode(tt.in),
				InfrastructureTopology: configv1.HighlyAvailableTopologyMode}
			assert.Contains(t, c.String(), "control plane topology "+tt.want+", ")
		})
	}
}

func TestQuoteLimit(t *testing.T) {
	letters := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   any
		want string
	}{
		// A quoted string is its length plus the two quotes.
		{"64 bytes once quoted are kept", letters(62), `"` + letters(62) + `"`},
		{"65 bytes once quoted are cut to 64", letters(63), `"` + letters(63) + `...(65 bytes)`},
		{"escapes count once quoted", strings.Repeat("\n", 31), `"` + strings.Repeat(`\n`, 31) + `"`},
		{"escapes past the limit", strings.Repeat("\n", 32), `"` + strings.Repeat(`\n`, 31) + `\...(66 bytes)`},
		{"non-strings are JSON", map[string]any{"mode": 1}, `{"mode":1}`},
		{"long JSON is cut too", []int{1000000000, 1000000000, 1000000000, 1000000000, 1000000000, 1000000000, 1000000000},
			"[" + strings.Repeat("1000000000,", 5) + "10000000...(78 bytes)"},
		{"what JSON cannot encode is printed", math.Inf(1), "+Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quote(tt.in)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUnenforcedCounts(t *testing.T) {
	tests := []struct {
		policies int
		want     string
	}{
		{-1, ""}, // unknown: nothing said
		{0, ""},  // nothing to enforce
		{1, "1 NodeNetworkConfigurationPolicy exists and is not enforced, as no kubernetes-nmstate handler runs; "},
		{2, "2 NodeNetworkConfigurationPolicies exist and are not enforced, as no kubernetes-nmstate handler runs; "},
	}
	disabled := decide(Config{Mode: ModeDisabled}, haCluster)
	standalone := haCluster
	standalone.ManagedBy = standaloneOperator
	managed := decide(Config{}, standalone)
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.policies), func(t *testing.T) {
			assert.Equal(t, tt.want, unenforced(tt.policies))
			available := find(conditionsFor(disabled, nil, Observed{WorkloadsKnown: true, Policies: tt.policies}), ConditionAvailable)
			assert.Equal(t, tt.want+disabled.Message, available.Message)
			// The standalone operator's handler enforces them.
			available = find(conditionsFor(managed, nil, Observed{WorkloadsKnown: true, Policies: tt.policies}), ConditionAvailable)
			assert.Equal(t, managed.Message, available.Message)
		})
	}
}

func TestDecideNamesTheMode(t *testing.T) {
	tests := []struct {
		mode Mode
		want string
	}{
		{ModeDefault, "omitted (platform default)"},
		{ModeEnabled, "Enabled"},
		{ModeDisabled, "Disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, modeName(tt.mode))
			for _, c := range []cluster{
				haCluster,
				{Platform: configv1.AWSPlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
					InfrastructureTopology: configv1.HighlyAvailableTopologyMode, DefaultOnGate: true},
				{Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
					InfrastructureTopology: configv1.HighlyAvailableTopologyMode, ManagedBy: standaloneOperator},
			} {
				d := decide(Config{Mode: tt.mode}, c)
				assert.Contains(t, d.Message, "topology HighlyAvailable, mode "+tt.want+")", c.String())
			}
		})
	}
}

func TestConditionsEdges(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	enabled := decide(Config{}, haCluster)
	progressing := func(status operv1.ConditionStatus, since time.Duration) []operv1.OperatorCondition {
		return []operv1.OperatorCondition{{Type: ConditionProgressing, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-since))}}
	}
	badConfig := &InputError{Reason: ReasonInvalidConfig, Err: assert.AnError}
	notSeen := webhook(2, 2, 2)
	notSeen.Generation = 2

	tests := []struct {
		name                            string
		err                             error
		observed                        Observed
		available, progressing, degrade want
	}{
		// The API is served only when both a handler pod and a webhook pod are available.
		{name: "no handler pod available yet", observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 0), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionFalse, ReasonDeploying, []string{"handler ready on 0 of 3 nodes"}},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "one handler pod available", observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 1), Webhook: webhook(2, 2, 1)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, []string{"handler ready on 1 of 3 nodes", "webhook 1 of 2 replicas available"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "invalid config with no handler pod available is not kept-deployed", err: badConfig,
			observed:    Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 0), Webhook: webhook(2, 2, 2)},
			available:   want{operv1.ConditionFalse, ReasonInvalidConfig, nil},
			progressing: want{operv1.ConditionFalse, ReasonInvalidConfig, nil},
			degrade:     want{operv1.ConditionTrue, ReasonInvalidConfig, nil}},
		{name: "invalid config with no webhook pod available is still kept-deployed: the handlers enforce policies", err: badConfig,
			observed:    Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 0)},
			available:   want{operv1.ConditionTrue, ReasonKeptDeployed, nil},
			progressing: want{operv1.ConditionFalse, ReasonInvalidConfig, nil},
			degrade:     want{operv1.ConditionTrue, ReasonInvalidConfig, nil}},
		{name: "webhook Deployment not yet seen by its controller", observed: Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: notSeen},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, []string{"handler ready on 3 of 3 nodes; webhook Deployment not yet picked up by its controller"}},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		// Hung means longer than RolloutHungAfter, not equal to it.
		{name: "rolling out for exactly RolloutHungAfter is not hung",
			observed:    Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Previous: progressing(operv1.ConditionTrue, RolloutHungAfter), Now: now},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "rolling out a second longer than RolloutHungAfter is hung",
			observed:    Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Previous: progressing(operv1.ConditionTrue, RolloutHungAfter+time.Second), Now: now},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionTrue, ReasonRolloutHung, []string{"has not finished in over 15m0s, since 2026-"}}},
		{name: "a previous Progressing False does not time a rollout",
			observed:    Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Previous: progressing(operv1.ConditionFalse, time.Hour), Now: now},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
		{name: "no current time, no verdict on a hung rollout",
			observed:    Observed{WorkloadsKnown: true, Handler: handler(2, 2, 5, 5, 3), Webhook: webhook(2, 2, 2), Previous: progressing(operv1.ConditionTrue, time.Hour)},
			available:   want{operv1.ConditionTrue, ReasonPlatformDefault, nil},
			progressing: want{operv1.ConditionTrue, ReasonRollingOut, nil},
			degrade:     want{operv1.ConditionFalse, ReasonAsExpected, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := enabled
			if tt.err != nil {
				d = Decision{}
			}
			conds := conditionsFor(d, tt.err, tt.observed)
			require.Len(t, conds, 3)
			for _, c := range []struct {
				typ  string
				want want
			}{{ConditionAvailable, tt.available}, {ConditionProgressing, tt.progressing}, {ConditionDegraded, tt.degrade}} {
				got := find(conds, c.typ)
				require.NotNil(t, got, c.typ)
				assert.Equal(t, c.want.status, got.Status, "%s: %s", c.typ, got.Message)
				assert.Equal(t, c.want.reason, got.Reason, "%s: %s", c.typ, got.Message)
				for _, s := range c.want.message {
					assert.Contains(t, got.Message, s, c.typ)
				}
			}
		})
	}
}
