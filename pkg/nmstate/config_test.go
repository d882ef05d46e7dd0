package nmstate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func network(spec map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": "operator.openshift.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": "cluster"}}
	if spec != nil {
		obj["spec"] = spec
	}
	return &unstructured.Unstructured{Object: obj}
}

func withNMState(v any) *unstructured.Unstructured {
	return network(map[string]any{"kubernetesNMState": v})
}

func TestConfigFromNetwork(t *testing.T) {
	sixty := int64(60)
	tests := []struct {
		name    string
		network *unstructured.Unstructured
		want    Config
		// errHas are substrings the error must contain: the bad value and the valid ones.
		errHas []string
	}{
		{name: "nil network", network: nil, want: Config{}},
		{name: "no spec", network: network(nil), want: Config{}},
		{name: "field absent", network: network(map[string]any{"disableMultiNetwork": false}), want: Config{}},
		{name: "field null", network: withNMState(nil), want: Config{}},
		{name: "empty object", network: withNMState(map[string]any{}), want: Config{}},
		{name: "mode empty string is the default", network: withNMState(map[string]any{"mode": ""}), want: Config{}},
		{name: "Enabled", network: withNMState(map[string]any{"mode": "Enabled"}), want: Config{Mode: ModeEnabled}},
		{name: "Disabled", network: withNMState(map[string]any{"mode": "Disabled"}), want: Config{Mode: ModeDisabled}},
		{name: "placement", network: withNMState(map[string]any{"mode": "Enabled", "handlerPlacement": map[string]any{
			"nodeSelector": map[string]any{"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "linux"},
			"tolerations": []any{
				map[string]any{"key": "dedicated", "operator": "Equal", "value": "net", "effect": "NoSchedule"},
				map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(60)},
			},
		}}), want: Config{Mode: ModeEnabled,
			NodeSelector: map[string]string{"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "net", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sixty},
			}}},
		{name: "empty tolerations list tolerates nothing", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{}}}),
			want: Config{Tolerations: []corev1.Toleration{}}},

		{name: "wrong case", network: withNMState(map[string]any{"mode": "enabled"}),
			errHas: []string{`"enabled"`, `"Enabled" or "Disabled"`, "did you mean \"Enabled\""}},
		{name: "bool", network: withNMState(map[string]any{"mode": true}), errHas: []string{"mode is true", `"Enabled" or "Disabled"`}},
		{name: "string true", network: withNMState(map[string]any{"mode": "true"}), errHas: []string{`"true"`, `"Enabled" or "Disabled"`}},
		{name: "number", network: withNMState(map[string]any{"mode": int64(1)}), errHas: []string{"mode is 1", `"Enabled"`}},
		{name: "list", network: withNMState(map[string]any{"mode": []any{"Enabled"}}), errHas: []string{`["Enabled"]`}},
		{name: "not an object", network: withNMState("Enabled"), errHas: []string{`spec.kubernetesNMState must be an object`, `"Enabled"`}},
		{name: "spec not an object", network: &unstructured.Unstructured{Object: map[string]any{"spec": "x"}}, errHas: []string{"spec must be an object"}},
		{name: "unknown field", network: withNMState(map[string]any{"Mode": "Enabled"}), errHas: []string{`unknown field "Mode"`, "mode, handlerPlacement"}},
		{name: "huge value is cut short", network: withNMState(map[string]any{"mode": strings.Repeat("x", 1<<20)}), errHas: []string{"...(1048578 bytes)"}},
		{name: "placement not an object", network: withNMState(map[string]any{"handlerPlacement": "workers"}), errHas: []string{"handlerPlacement must be an object", `"workers"`}},
		{name: "placement unknown field", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": map[string]any{}}}), errHas: []string{`unknown field "affinity"`}},
		{name: "bad label key", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"bad key!": "x"}}}),
			errHas: []string{`invalid label key "bad key!"`}},
		{name: "bad label value", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"a": "no spaces"}}}),
			errHas: []string{`invalid label value "no spaces"`}},
		{name: "label value not a string", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"a": int64(3)}}}),
			errHas: []string{`nodeSelector["a"] must be a string, got 3`}},
		{name: "windows selector", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "windows"}}}),
			errHas: []string{`"windows"`, "Linux nodes only"}},
		{name: "selector not a map", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": []any{"a"}}}),
			errHas: []string{"nodeSelector must be a map"}},
		{name: "tolerations not a list", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": "all"}}),
			errHas: []string{"tolerations must be a list"}},
		{name: "toleration not an object", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{"x"}}}),
			errHas: []string{"tolerations[0] must be a toleration object"}},
		{name: "toleration unknown field", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"keys": "a"}}}}),
			errHas: []string{"tolerations[0] is not a valid toleration", "keys"}},
		{name: "toleration bad operator", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"key": "a", "operator": "In"}}}}),
			errHas: []string{`operator "In" is invalid`, `"Exists" and "Equal"`}},
		{name: "toleration bad effect", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Exists", "effect": "NoRun"}}}}),
			errHas: []string{`effect "NoRun" is invalid`}},
		{name: "toleration Exists with value", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"key": "a", "operator": "Exists", "value": "b"}}}}),
			errHas: []string{`takes no value, got "b"`}},
		{name: "toleration Equal without key", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Equal", "value": "b"}}}}),
			errHas: []string{"needs a key"}},
		{name: "toleration bad key", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"key": "-bad-", "operator": "Exists"}}}}),
			errHas: []string{`key "-bad-" is invalid`}},
		{name: "huge unknown toleration field is cut short", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"key": "a", strings.Repeat("f", 10000): "x"}}}}),
			errHas: []string{"tolerations[0] is not a valid toleration", "bytes)"}},
		{name: "tolerationSeconds without NoExecute", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Exists", "tolerationSeconds": int64(5)}}}}),
			errHas: []string{"tolerationSeconds is only valid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromNetwork(tt.network)
			if tt.errHas == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.Error(t, err)
			assert.Equal(t, ReasonInvalidConfig, ReasonOf(err))
			assert.Less(t, len(err.Error()), 1024, "the message must stay readable")
			for _, s := range tt.errHas {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}
