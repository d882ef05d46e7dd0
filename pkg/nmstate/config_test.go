package nmstate

import (
	"strings"
	"testing"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// zoneAffinity is a required node affinity on the zone label.
func zoneAffinity(operator string, values ...string) map[string]any {
	vals := make([]any, len(values))
	for i, v := range values {
		vals[i] = v
	}
	req := map[string]any{"key": "topology.kubernetes.io/zone", "operator": operator}
	if len(values) > 0 {
		req["values"] = vals
	}
	return map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{req}}}}}}
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
		}}), want: Config{Mode: ModeEnabled, Handler: Placement{
			NodeSelector: map[string]string{"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "net", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sixty},
			}}}},
		{name: "empty tolerations list tolerates nothing", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{}}}),
			want: Config{Handler: Placement{Tolerations: []corev1.Toleration{}}}},

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
		{name: "placement unknown field", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"nodeSelectors": map[string]any{}}}),
			errHas: []string{`handlerPlacement has an unknown field "nodeSelectors"`, "nodeSelector, tolerations, affinity"}},
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

		// The knobs that replace the NMState CR's fields.
		{name: "handler affinity", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": zoneAffinity("In", "rack-1")}}),
			want: Config{Handler: Placement{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"rack-1"}}}}}}}}}}},
		{name: "infra placement", network: withNMState(map[string]any{"infraPlacement": map[string]any{
			"nodeSelector": map[string]any{"node-role.kubernetes.io/infra": ""},
			"tolerations":  []any{map[string]any{"key": "node-role.kubernetes.io/infra", "operator": "Exists", "effect": "NoSchedule"}},
			"affinity": map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"weight": int64(50), "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname",
					"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "kubernetes-nmstate"}}}}}}},
		}}), want: Config{Infra: Placement{
			NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""},
			Tolerations:  []corev1.Toleration{{Key: "node-role.kubernetes.io/infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kubernetes-nmstate"}}}}}}},
		}}},
		{name: "probe DNS host", network: withNMState(map[string]any{"probes": map[string]any{"dnsHost": "dns.lab.example"}}), want: Config{ProbeDNSHost: "dns.lab.example"}},
		{name: "log level", network: network(map[string]any{"logLevel": "Debug"}), want: Config{LogLevel: operv1.Debug}},
		{name: "log level with the field", network: network(map[string]any{"logLevel": "TraceAll", "kubernetesNMState": map[string]any{"mode": "Enabled"}}),
			want: Config{Mode: ModeEnabled, LogLevel: operv1.TraceAll}},
		{name: "log level empty is Normal", network: network(map[string]any{"logLevel": ""}), want: Config{}},

		{name: "log level wrong case", network: network(map[string]any{"logLevel": "debug"}),
			errHas: []string{`spec.logLevel is "debug"`, `"Normal", "Debug", "Trace", "TraceAll"`, `did you mean "Debug"`}},
		{name: "log level not a string", network: network(map[string]any{"logLevel": int64(4)}), errHas: []string{"spec.logLevel is 4"}},
		{name: "infra windows selector", network: withNMState(map[string]any{"infraPlacement": map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "windows"}}}),
			errHas: []string{`infraPlacement.nodeSelector["kubernetes.io/os"] is "windows"`, "webhook and metrics images run on Linux nodes only"}},
		{name: "infra bad toleration", network: withNMState(map[string]any{"infraPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Equal"}}}}),
			errHas: []string{"infraPlacement.tolerations[0]: operator \"Equal\" needs a key"}},
		{name: "infra placement not an object", network: withNMState(map[string]any{"infraPlacement": true}), errHas: []string{"infraPlacement must be an object", "got true"}},
		{name: "probes unknown field", network: withNMState(map[string]any{"probes": map[string]any{"dns": map[string]any{"host": "x"}}}),
			errHas: []string{`probes has an unknown field "dns"`, "valid fields are dnsHost"}},
		{name: "probes not an object", network: withNMState(map[string]any{"probes": "x"}), errHas: []string{"probes must be an object with dnsHost"}},
		{name: "probe host not a string", network: withNMState(map[string]any{"probes": map[string]any{"dnsHost": int64(1)}}), errHas: []string{"dnsHost must be a host name, got 1"}},
		{name: "probe host uppercase", network: withNMState(map[string]any{"probes": map[string]any{"dnsHost": "DNS.Example"}}),
			errHas: []string{`dnsHost is "DNS.Example", not a lowercase DNS name`}},
		{name: "probe host with a 64-character label", network: withNMState(map[string]any{"probes": map[string]any{"dnsHost": strings.Repeat("a", 64) + ".example"}}),
			errHas: []string{"not a DNS name: its label", "has 64 characters, at most 63 are valid"}},
		{name: "probe host with 63-character labels", network: withNMState(map[string]any{"probes": map[string]any{"dnsHost": strings.Repeat("a", 63) + "." + strings.Repeat("b", 63)}}),
			want: Config{ProbeDNSHost: strings.Repeat("a", 63) + "." + strings.Repeat("b", 63)}},
		{name: "probe host with a port", network: withNMState(map[string]any{"probes": map[string]any{"dnsHost": "dns.example:53"}}),
			errHas: []string{`"dns.example:53", not a lowercase DNS name`}},
		{name: "affinity not an object", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": []any{}}}),
			errHas: []string{"handlerPlacement.affinity must be an object with nodeAffinity, podAffinity or podAntiAffinity"}},
		{name: "affinity unknown field", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": map[string]any{"nodeAfinity": map[string]any{}}}}),
			errHas: []string{"handlerPlacement.affinity is not a valid affinity", "nodeAfinity"}},
		{name: "affinity bad operator", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": zoneAffinity("Equals", "rack-1")}}),
			errHas: []string{`matchExpressions[0].operator is "Equals"`, `"In", "NotIn", "Exists", "DoesNotExist", "Gt" and "Lt"`}},
		{name: "affinity In without values", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": zoneAffinity("In")}}),
			errHas: []string{`handlerPlacement.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values must not be empty with operator "In"`}},
		{name: "affinity Exists with values", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": zoneAffinity("Exists", "a")}}),
			errHas: []string{`values must be empty with operator "Exists"`}},
		{name: "affinity Gt not a number", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": zoneAffinity("Gt", "ten")}}),
			errHas: []string{`values "ten" must be an integer with operator "Gt"`}},
		{name: "affinity bad weight", network: withNMState(map[string]any{"infraPlacement": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": int64(0), "preference": map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Exists"}}}}}}}}}),
			errHas: []string{"infraPlacement.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight is 0; it must be between 1 and 100"}},
		{name: "affinity empty required terms", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{}}}}}}),
			errHas: []string{"nodeSelectorTerms must have at least one term"}},
		{name: "affinity pod term without topology key", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": map[string]any{"podAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}}}}}}),
			errHas: []string{"podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey is required"}},
		{name: "affinity bad label selector", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": map[string]any{"podAntiAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"topologyKey": "kubernetes.io/hostname",
				"labelSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "In"}}}}}}}}}),
			errHas: []string{"podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values"}},
		{name: "affinity match field other than the name", network: withNMState(map[string]any{"handlerPlacement": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchFields": []any{
				map[string]any{"key": "metadata.labels", "operator": "In", "values": []any{"a"}}}}}}}}}}),
			errHas: []string{`matchFields[0].key is "metadata.labels"`, `"metadata.name"`}},
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
