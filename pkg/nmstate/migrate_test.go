package nmstate

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// nmstateCR is an NMState CR with the given spec (YAML), as the API server
// returns it: integers are int64.
func nmstateCR(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	doc, err := yaml.YAMLToJSON([]byte("apiVersion: nmstate.io/v1\nkind: NMState\nmetadata:\n  name: nmstate\nspec:\n" + indent(spec)))
	require.NoError(t, err)
	cr := &unstructured.Unstructured{}
	require.NoError(t, cr.UnmarshalJSON(doc))
	return cr
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// Every v0.86.0 NMStateSpec field, none at its default.
const everyField = `nodeSelector:
  kubernetes.io/os: linux
  node-role.kubernetes.io/worker: ""
tolerations:
- key: example.com/dedicated
  operator: Equal
  value: nmstate
  effect: NoSchedule
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - key: example.com/network
          operator: In
          values: [ovs]
infraNodeSelector:
  node-role.kubernetes.io/infra: ""
infraTolerations:
- key: node-role.kubernetes.io/infra
  operator: Exists
  effect: NoSchedule
infraAffinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 50
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            app: kubernetes-nmstate
selfSignConfiguration:
  caRotateInterval: 4380h0m0s
  caOverlapInterval: 12h0m0s
  certRotateInterval: 2190h0m0s
  certOverlapInterval: 12h0m0s
probeConfiguration:
  dns:
    host: dns.example.com
metricsConfiguration:
  bindAddress: ":9090"
logLevel: debug
`

// What the NMState CRD's defaults leave in a CR created empty.
const crdDefaults = `probeConfiguration:
  dns:
    host: root-servers.net
metricsConfiguration:
  bindAddress: ":8089"
logLevel: info
`

func TestMigrateNMState(t *testing.T) {
	tests := []struct {
		name string
		spec string
		// current is the Network's spec, nil for none.
		current map[string]any
		// patch is the exact patch, when the case pins it.
		patch   string
		dropped []string
		errHas  []string
	}{
		{name: "every field", spec: everyField,
			patch: `{"spec":{"kubernetesNMState":{` +
				`"handlerPlacement":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"example.com/network","operator":"In","values":["ovs"]}]}]}}},` +
				`"nodeSelector":{"node-role.kubernetes.io/worker":""},` +
				`"tolerations":[{"effect":"NoSchedule","key":"example.com/dedicated","operator":"Equal","value":"nmstate"}]},` +
				`"infraPlacement":{"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"kubernetes-nmstate"}},"topologyKey":"kubernetes.io/hostname"},"weight":50}]}},` +
				`"nodeSelector":{"node-role.kubernetes.io/infra":""},` +
				`"tolerations":[{"effect":"NoSchedule","key":"node-role.kubernetes.io/infra","operator":"Exists"}]},` +
				`"mode":"Enabled","probes":{"dnsHost":"dns.example.com"}},"logLevel":"Debug"}}`,
			dropped: []string{"metricsConfiguration.bindAddress", "selfSignConfiguration.caRotateInterval", "selfSignConfiguration.caOverlapInterval",
				"selfSignConfiguration.certRotateInterval", "selfSignConfiguration.certOverlapInterval"}},
		{name: "a CR created empty: only the mode", spec: crdDefaults,
			patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`, dropped: []string{"metricsConfiguration.bindAddress"}},
		{name: "no spec at all", spec: "{}", patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`},
		{name: "values that equal CNO's defaults are left out", spec: `nodeSelector:
  kubernetes.io/os: linux
tolerations:
- operator: Exists
affinity: {}
infraNodeSelector:
  kubernetes.io/os: linux
infraTolerations:
- key: node-role.kubernetes.io/control-plane
  operator: Exists
  effect: NoSchedule
- key: node-role.kubernetes.io/master
  operator: Exists
  effect: NoSchedule
infraAffinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 10
      preference:
        matchExpressions:
        - key: node-role.kubernetes.io/control-plane
          operator: Exists
probeConfiguration:
  dns:
    host: root-servers.net
metricsConfiguration:
  bindAddress: "0"
logLevel: info
`, patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`},
		{name: "the operator's own infra affinity default is not CNO's: carried", spec: `infraAffinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 10
      preference:
        matchExpressions:
        - key: node-role.kubernetes.io/control-plane
          operator: Exists
    - weight: 1
      preference:
        matchExpressions:
        - key: node-role.kubernetes.io/master
          operator: Exists
`, patch: `{"spec":{"kubernetesNMState":{"infraPlacement":{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[` +
			`{"preference":{"matchExpressions":[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists"}]},"weight":10},` +
			`{"preference":{"matchExpressions":[{"key":"node-role.kubernetes.io/master","operator":"Exists"}]},"weight":1}]}}},"mode":"Enabled"}}}`},
		{name: "an empty infra affinity removes CNO's preference, as it removes the operator's", spec: "infraAffinity: {}\n",
			patch: `{"spec":{"kubernetesNMState":{"infraPlacement":{"affinity":{}},"mode":"Enabled"}}}`},
		{name: "empty toleration lists have no equivalent", spec: "tolerations: []\ninfraTolerations: []\n",
			patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`, dropped: []string{"tolerations", "infraTolerations"}},
		{name: "debug raises a Normal logLevel", spec: "logLevel: debug\n", current: map[string]any{"logLevel": "Normal"},
			patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"},"logLevel":"Debug"}}`},
		{name: "debug never lowers Trace", spec: "logLevel: debug\n", current: map[string]any{"logLevel": "Trace"},
			patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`},
		{name: "info never lowers Debug", spec: "logLevel: info\n", current: map[string]any{"logLevel": "Debug"},
			patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`},
		{name: "what the Network sets and the CR does not is cleared", spec: `nodeSelector:
  example.com/b: "2"
affinity:
  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          app: other
`, current: map[string]any{"kubernetesNMState": map[string]any{
			"mode": "Disabled",
			"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"example.com/a": "1", "kubernetes.io/os": "linux"},
				"tolerations": []any{map[string]any{"operator": "Exists", "effect": "NoExecute"}},
				"affinity":    zoneAffinity("In", "a")},
			"infraPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Exists"}}},
			"probes":         map[string]any{"dnsHost": "dns.example.com"}}},
			patch: `{"spec":{"kubernetesNMState":{"handlerPlacement":{` +
				`"affinity":{"nodeAffinity":null,"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"other"}},"topologyKey":"kubernetes.io/hostname"}]}},` +
				`"nodeSelector":{"example.com/a":null,"example.com/b":"2"},"tolerations":null},` +
				`"infraPlacement":null,"mode":"Enabled","probes":null}}}`},
		{name: "fields newer than v0.86.0 are reported", spec: "logLevel: info\nfutureField: 3\n",
			patch: `{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}`, dropped: []string{"futureField"}},

		{name: "a Windows handler cannot be carried", spec: "nodeSelector:\n  kubernetes.io/os: windows\n",
			errHas: []string{`NMState CR nmstate: spec.nodeSelector["kubernetes.io/os"] is "windows"`, "Linux nodes only", "leave the operator in charge"}},
		{name: "nor Windows infra", spec: "infraNodeSelector:\n  kubernetes.io/os: windows\n",
			errHas: []string{`spec.infraNodeSelector["kubernetes.io/os"] is "windows"`}},
		{name: "a DNS host CNO refuses", spec: "probeConfiguration:\n  dns:\n    host: Not_A_Name\n",
			errHas: []string{"its settings would be refused", `spec.kubernetesNMState.probes.dnsHost is "Not_A_Name"`}},
		{name: "a toleration CNO refuses", spec: "tolerations:\n- operator: Equal\n",
			errHas: []string{"its settings would be refused", "spec.kubernetesNMState.handlerPlacement.tolerations[0]"}},
		{name: "an unknown logLevel", spec: "logLevel: trace\n", errHas: []string{`spec.logLevel is "trace"; valid values are "info" and "debug"`}},
		{name: "a nodeSelector that is no map", spec: "nodeSelector: [a]\n", errHas: []string{"spec.nodeSelector must be a map"}},
		{name: "a spec that is no object", spec: "", errHas: []string{"spec must be an object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := nmstateCR(t, tt.spec)
			if tt.spec == "" {
				cr.Object["spec"] = "nonsense"
			}
			current, err := ConfigFromNetwork(network(tt.current))
			require.NoError(t, err)
			m, err := MigrationFrom(cr, current)
			if tt.errHas != nil {
				require.Error(t, err)
				for _, s := range tt.errHas {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			if tt.patch != "" {
				assert.Equal(t, tt.patch, m.Patch)
			}
			assert.Equal(t, "oc patch network.operator cluster --type=merge -p '"+m.Patch+"'", m.Command)
			var fields []string
			for _, d := range m.Dropped {
				fields = append(fields, d.Field)
				assert.NotEmpty(t, d.Reason, d.Field)
			}
			assert.Equal(t, tt.dropped, fields)
			assertRoundTrip(t, cr, network(tt.current), m)
		})
	}
}

// assertRoundTrip applies the patch to the Network as the API server does
// a merge patch, reads it back with ConfigFromNetwork and checks that CNO
// then renders what the CR asked for. The CR's meaning is worked out here
// on its own, from the documented mapping.
func assertRoundTrip(t *testing.T, cr, net *unstructured.Unstructured, m Migration) {
	t.Helper()
	before, err := json.Marshal(net.Object)
	require.NoError(t, err)
	after, err := jsonpatch.MergePatch(before, []byte(m.Patch))
	require.NoError(t, err)
	patched := &unstructured.Unstructured{}
	require.NoError(t, patched.UnmarshalJSON(after))
	cfg, err := ConfigFromNetwork(patched)
	require.NoError(t, err, "the patched Network: %s", after)
	assert.Equal(t, ModeEnabled, cfg.Mode)
	got := newRenderParams(cfg, cluster{}, Images{})

	spec, _ := cr.Object["spec"].(map[string]any)
	defaults := newRenderParams(Config{}, cluster{}, Images{})
	selector := func(field string) map[string]string {
		out := map[string]string{linuxLabel: "linux"}
		m, _ := spec[field].(map[string]any)
		for k, v := range m {
			out[k] = v.(string)
		}
		return out
	}
	tolerations := func(field string, def []corev1.Toleration) []corev1.Toleration {
		list, _ := spec[field].([]any)
		if len(list) == 0 {
			return def
		}
		out := make([]corev1.Toleration, len(list))
		for i, item := range list {
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(item.(map[string]any), &out[i]))
		}
		return out
	}
	affinity := func(field string, def *corev1.Affinity) *corev1.Affinity {
		obj, ok := spec[field].(map[string]any)
		if !ok {
			return def
		}
		a := &corev1.Affinity{}
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj, a))
		return a
	}
	assert.Equal(t, selector("nodeSelector"), got.HandlerNodeSelector)
	assert.True(t, sameTolerations(tolerations("tolerations", defaults.HandlerTolerations), got.HandlerTolerations), "handler tolerations %v", got.HandlerTolerations)
	want := affinity("affinity", nil)
	if want != nil && *want == (corev1.Affinity{}) {
		want = nil // none either way
	}
	assert.Equal(t, want, got.HandlerAffinity)
	assert.Equal(t, selector("infraNodeSelector"), got.InfraNodeSelector)
	assert.True(t, sameTolerations(tolerations("infraTolerations", defaults.InfraTolerations), got.InfraTolerations), "infra tolerations %v", got.InfraTolerations)
	assert.Equal(t, affinity("infraAffinity", defaults.InfraAffinity), got.InfraAffinity)
	host, _, _ := unstructured.NestedString(spec, "probeConfiguration", "dns", "host")
	if host == "" {
		host = defaultProbeDNSHost
	}
	assert.Equal(t, host, got.ProbeDNSHost)
	previous, err := ConfigFromNetwork(net)
	require.NoError(t, err)
	assert.Equal(t, spec["logLevel"] == "debug" || previous.Verbose(), got.DebugLogs)
	rank := func(l operv1.LogLevel) int { return max(0, slices.Index(validLogLevels, l)) }
	assert.GreaterOrEqual(t, rank(cfg.LogLevel), rank(previous.LogLevel), "never lowered: %q from %q", cfg.LogLevel, previous.LogLevel)
}

// The command is one shell word per argument whatever the values hold:
// through sh -c, with oc standing in as a function that prints its
// arguments, the last one is the patch, byte for byte.
func TestMigrateNMStateQuoting(t *testing.T) {
	// A node name is matched as it is: the one place a value may hold
	// quotes and shell syntax and still pass.
	cr := nmstateCR(t, `affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchFields:
        - key: metadata.name
          operator: NotIn
          values: ["it's $(touch /tmp/pwned) \"x\" \\y ' '' ; &"]
`)
	m, err := MigrationFrom(cr, Config{})
	require.NoError(t, err)
	assert.Contains(t, m.Patch, `it's $(touch /tmp/pwned) \"x\" \\y ' '' ; &`)
	out, err := exec.Command("sh", "-c", `oc() { for a in "$@"; do printf '%s\n' "$a"; done; }; `+m.Command).Output()
	require.NoError(t, err)
	args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	assert.Equal(t, []string{"patch", "network.operator", "cluster", "--type=merge", "-p", m.Patch}, args)
	assertRoundTrip(t, cr, network(nil), m)

	for _, s := range []string{"", "'", "''", `a'b`, `'\''`, "\n", `"$HOME"`} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(s)).Output()
		require.NoError(t, err)
		assert.Equal(t, s, string(out), "%q", s)
	}
}

// The same CR gives the same bytes: the patch is compared and pasted.
func TestMigrateNMStateDeterministic(t *testing.T) {
	first, err := MigrationFrom(nmstateCR(t, everyField), Config{})
	require.NoError(t, err)
	for range 20 {
		again, err := MigrationFrom(nmstateCR(t, everyField), Config{})
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
}
