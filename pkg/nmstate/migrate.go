package nmstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	operv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Migration carries a standalone operator's NMState CR (kubernetes-nmstate
// v0.86.0's api/v1 NMStateSpec) into the Network operator config, for the
// handover from the OLM operator to CNO.
type Migration struct {
	// Patch is the JSON merge patch of network.operator.openshift.io/cluster:
	// keys sorted, values that equal CNO's defaults left out.
	Patch string
	// Command applies Patch, quoted for a POSIX shell.
	Command string
	// Dropped are the CR's settings with no equivalent in the Network
	// operator config: the empty toleration lists, the metrics address,
	// the certificate intervals, then fields v0.86.0 does not have.
	Dropped []DroppedSetting
}

// DroppedSetting is a setting of the NMState CR that is not carried over.
type DroppedSetting struct {
	Field  string // in the CR's spec, e.g. "selfSignConfiguration.caRotateInterval"
	Value  string // as a message shows it: quoted and bounded
	Reason string
}

// Values of the NMState CR's fields (v0.86.0's CRD and operator), and why
// some have no equivalent.
const (
	nmstateLogLevelInfo    = "info"
	nmstateLogLevelDebug   = "debug"
	metricsServerOff       = "0"
	noMetricsReason        = "the handler the Cluster Network Operator deploys serves no metrics port on the host network; policy and interface metrics come from the nmstate-metrics Deployment"
	serviceCAReason        = "OpenShift's service CA issues and rotates the webhook's serving certificates (the standalone operator ignores this on OpenShift too)"
	emptyTolerationsReason = "an empty list, with which the standalone operator adds no toleration at all; the Network's tolerations need at least one entry, so its default applies"
)

// nmstateSpecFields are the fields of v0.86.0's NMStateSpec; any other one
// comes from a newer CRD and is reported, not silently lost.
var nmstateSpecFields = []string{
	"affinity", "infraAffinity", "nodeSelector", "tolerations", "infraNodeSelector", "infraTolerations",
	"selfSignConfiguration", "probeConfiguration", "metricsConfiguration", "logLevel",
}

var selfSignFields = []string{"caRotateInterval", "caOverlapInterval", "certRotateInterval", "certOverlapInterval"}

// MigrationFrom computes the patch that gives the Network operator config
// the settings of cr, an NMState CR as the API server returns it. current is
// what the Network holds now (the zero Config when it has nothing): the
// patch clears what current sets and the CR does not, so that the result is
// the CR's settings exactly, and it never lowers a spec.logLevel already
// above Normal. It sets mode Enabled: whoever ran the standalone operator
// chose to run kubernetes-nmstate.
func MigrationFrom(cr *unstructured.Unstructured, current Config) (Migration, error) {
	if cr == nil {
		return Migration{}, fmt.Errorf("no NMState CR given")
	}
	spec, err := crSpec(cr)
	if err != nil {
		return Migration{}, err
	}
	var m Migration
	want := map[string]any{"mode": string(ModeEnabled)}
	for _, p := range []placementFields{handlerFields, infraFields} {
		carried, dropped, err := carryPlacement(spec, p)
		if err != nil {
			return Migration{}, fmt.Errorf("NMState CR %s: %w", cr.GetName(), err)
		}
		m.Dropped = append(m.Dropped, dropped...)
		if len(carried) > 0 {
			want[p.key] = carried
		}
	}

	host, _, err := unstructured.NestedFieldNoCopy(spec, "probeConfiguration", "dns", "host")
	if err != nil {
		return Migration{}, fmt.Errorf("NMState CR %s: spec.probeConfiguration must be an object: %w", cr.GetName(), err)
	}
	switch h := host.(type) {
	case nil:
	case string:
		if h != "" && h != defaultProbeDNSHost {
			want["probes"] = map[string]any{"dnsHost": h}
		}
	default:
		return Migration{}, fmt.Errorf("NMState CR %s: spec.probeConfiguration.dns.host must be a string, got %s", cr.GetName(), quote(host))
	}

	logLevel := ""
	switch v := spec["logLevel"]; v {
	case nil, "", nmstateLogLevelInfo:
	case nmstateLogLevelDebug:
		// spec.logLevel is CNO's own setting too: only ever raise it.
		if current.LogLevel == "" || current.LogLevel == operv1.Normal {
			logLevel = string(operv1.Debug)
		}
	default:
		return Migration{}, fmt.Errorf("NMState CR %s: spec.logLevel is %s; valid values are \"info\" and \"debug\"", cr.GetName(), quote(v))
	}

	// "0" is what CNO's handler runs with: nothing is lost.
	if addr, _, _ := unstructured.NestedFieldNoCopy(spec, "metricsConfiguration", "bindAddress"); addr != nil && addr != "" && addr != metricsServerOff {
		m.Dropped = append(m.Dropped, DroppedSetting{Field: "metricsConfiguration.bindAddress", Value: quote(addr), Reason: noMetricsReason})
	}
	for _, f := range selfSignFields {
		v, _, _ := unstructured.NestedFieldNoCopy(spec, "selfSignConfiguration", f)
		if v != nil && v != "" {
			m.Dropped = append(m.Dropped, DroppedSetting{Field: "selfSignConfiguration." + f, Value: quote(v), Reason: serviceCAReason})
		}
	}

	for _, k := range sortedKeys(spec) {
		if !slices.Contains(nmstateSpecFields, k) {
			m.Dropped = append(m.Dropped, DroppedSetting{Field: k, Value: quote(spec[k]),
				Reason: "not a field of kubernetes-nmstate v0.86.0's NMState, which this release knows"})
		}
	}

	// What the patch leads to must be a config CNO accepts: refuse here
	// rather than print a command that leaves CNO Degraded.
	result := map[string]any{"kubernetesNMState": want}
	if logLevel != "" {
		result["logLevel"] = logLevel
	}
	if _, err := ConfigFromNetwork(&unstructured.Unstructured{Object: map[string]any{"spec": result}}); err != nil {
		return Migration{}, fmt.Errorf("NMState CR %s: carried into the Network operator config, its settings would be refused: %w", cr.GetName(), err)
	}

	currentTree, err := networkTree(current)
	if err != nil {
		return Migration{}, err
	}
	patchSpec := map[string]any{"kubernetesNMState": exactPatch(currentTree, want)}
	if logLevel != "" {
		patchSpec["logLevel"] = logLevel
	}
	if m.Patch, err = sortedJSON(map[string]any{"spec": patchSpec}); err != nil {
		return Migration{}, fmt.Errorf("NMState CR %s: writing the patch: %w", cr.GetName(), err)
	}
	m.Command = "oc patch network.operator cluster --type=merge -p " + shellQuote(m.Patch)
	return m, nil
}

func crSpec(cr *unstructured.Unstructured) (map[string]any, error) {
	raw, found, err := unstructured.NestedFieldNoCopy(cr.Object, "spec")
	if err != nil || !found || raw == nil {
		return map[string]any{}, nil
	}
	spec, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("NMState CR %s: spec must be an object, got %s", cr.GetName(), quote(raw))
	}
	return spec, nil
}

// placementFields name one placement in the NMState CR and in the Network.
type placementFields struct {
	key                                 string // in spec.kubernetesNMState
	nodeSelector, tolerations, affinity string // in the NMState CR's spec
	defaultTolerations                  []corev1.Toleration
	// defaultAffinity is nil for the handler: it has none by default, so
	// an empty one is the default too.
	defaultAffinity *corev1.Affinity
}

// cnoDefaults are the placements CNO renders when the Network sets none,
// with a control plane in the cluster; with a hosted one the infra defaults
// are empty, and the control-plane tolerations and preference left out here
// would have nothing to apply to anyway.
var cnoDefaults = newRenderParams(Config{}, cluster{}, Images{})

var (
	handlerFields = placementFields{key: "handlerPlacement", nodeSelector: "nodeSelector", tolerations: "tolerations", affinity: "affinity",
		defaultTolerations: cnoDefaults.HandlerTolerations}
	infraFields = placementFields{key: "infraPlacement", nodeSelector: "infraNodeSelector", tolerations: "infraTolerations", affinity: "infraAffinity",
		defaultTolerations: cnoDefaults.InfraTolerations, defaultAffinity: cnoDefaults.InfraAffinity}
)

func carryPlacement(spec map[string]any, p placementFields) (map[string]any, []DroppedSetting, error) {
	out := map[string]any{}
	var dropped []DroppedSetting
	if v := spec[p.nodeSelector]; v != nil {
		sel, err := carryNodeSelector(p.nodeSelector, v)
		if err != nil {
			return nil, nil, err
		}
		if sel != nil {
			out["nodeSelector"] = sel
		}
	}
	if v := spec[p.tolerations]; v != nil {
		list, d, err := carryTolerations(p.tolerations, v, p.defaultTolerations)
		if err != nil {
			return nil, nil, err
		}
		if d != nil {
			dropped = append(dropped, *d)
		}
		if list != nil {
			out["tolerations"] = list
		}
	}
	if v := spec[p.affinity]; v != nil {
		aff, err := carryAffinity(p.affinity, v, p.defaultAffinity)
		if err != nil {
			return nil, nil, err
		}
		if aff != nil {
			out["affinity"] = aff
		}
	}
	return out, dropped, nil
}

// carryNodeSelector drops kubernetes.io/os: linux, which CNO always adds.
func carryNodeSelector(field string, v any) (map[string]any, error) {
	sel, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.%s must be a map of label keys to values, got %s", field, quote(v))
	}
	out := map[string]any{}
	for k, val := range sel {
		if k == linuxLabel {
			if val != "linux" {
				return nil, fmt.Errorf("spec.%s[%s] is %s: the Cluster Network Operator runs kubernetes-nmstate on Linux nodes only "+
					"and always selects %s: \"linux\"; remove the entry from the NMState CR, or leave the operator in charge", field, quote(k), quote(val), linuxLabel)
			}
			continue
		}
		out[k] = val
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// carryTolerations leaves out a list that equals CNO's default, in any order.
func carryTolerations(field string, v any, defaults []corev1.Toleration) ([]any, *DroppedSetting, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("spec.%s must be a list of tolerations, got %s", field, quote(v))
	}
	if len(list) == 0 {
		return nil, &DroppedSetting{Field: field, Value: "[]", Reason: emptyTolerationsReason}, nil
	}
	typed := make([]corev1.Toleration, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("spec.%s[%d] must be a toleration object, got %s", field, i, quote(item))
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &typed[i]); err != nil {
			return nil, nil, fmt.Errorf("spec.%s[%d] is not a toleration: %w", field, i, err)
		}
	}
	if sameTolerations(typed, defaults) {
		return nil, nil, nil
	}
	return list, nil, nil
}

func sameTolerations(a, b []corev1.Toleration) bool {
	return slices.Equal(tolerationKeys(a), tolerationKeys(b))
}

// tolerationKeys are the tolerations as sorted JSON strings: the order of
// tolerations does not matter.
func tolerationKeys(list []corev1.Toleration) []string {
	keys := make([]string, len(list))
	for i, t := range list {
		b, _ := json.Marshal(t) // a Toleration always marshals
		keys[i] = string(b)
	}
	slices.Sort(keys)
	return keys
}

// carryAffinity leaves out an affinity that equals CNO's default: none for
// the handler (so an empty one too), the control-plane preference for the
// infra Deployments (where an empty one is not the default: it removes the
// preference, as it does for the standalone operator).
func carryAffinity(field string, v any, defaults *corev1.Affinity) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.%s must be an affinity object, got %s", field, quote(v))
	}
	if defaults == nil && len(obj) == 0 {
		return nil, nil
	}
	var typed corev1.Affinity
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &typed); err != nil {
		return nil, fmt.Errorf("spec.%s is not an affinity: %w", field, err)
	}
	if defaults != nil && reflect.DeepEqual(&typed, defaults) {
		return nil, nil
	}
	return obj, nil
}

// networkTree is spec.kubernetesNMState as cfg was read from it, less what
// CNO adds anyway (the Linux node selector, the default DNS probe host).
func networkTree(cfg Config) (map[string]any, error) {
	tree := map[string]any{}
	if cfg.Mode != ModeDefault {
		tree["mode"] = string(cfg.Mode)
	}
	for key, p := range map[string]Placement{"handlerPlacement": cfg.Handler, "infraPlacement": cfg.Infra} {
		placement, err := placementTree(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s.%s: %w", fieldRoot, key, err)
		}
		if len(placement) > 0 {
			tree[key] = placement
		}
	}
	if cfg.ProbeDNSHost != "" && cfg.ProbeDNSHost != defaultProbeDNSHost {
		tree["probes"] = map[string]any{"dnsHost": cfg.ProbeDNSHost}
	}
	return tree, nil
}

func placementTree(p Placement) (map[string]any, error) {
	out := map[string]any{}
	sel := map[string]any{}
	for k, v := range p.NodeSelector {
		if k != linuxLabel {
			sel[k] = v
		}
	}
	if len(sel) > 0 {
		out["nodeSelector"] = sel
	}
	if p.Tolerations != nil {
		// A list is replaced whole by a merge patch: its items do not matter.
		out["tolerations"] = []any{}
	}
	if p.Affinity != nil {
		// An object is merged: the patch must clear each of its fields
		// that the CR does not set.
		aff, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.Affinity)
		if err != nil {
			return nil, err
		}
		out["affinity"] = aff
	}
	return out, nil
}

// exactPatch is the JSON merge patch (RFC 7386) that turns current into
// want: it sets every value of want and clears with null what only current
// has, at every level where both are objects, since a merge patch merges
// objects and replaces everything else.
func exactPatch(current, want map[string]any) map[string]any {
	out := make(map[string]any, len(want))
	for k, v := range want {
		w, wantObj := v.(map[string]any)
		c, curObj := current[k].(map[string]any)
		if wantObj && curObj {
			out[k] = exactPatch(c, w)
			continue
		}
		out[k] = v
	}
	for k := range current {
		if _, kept := want[k]; !kept {
			out[k] = nil
		}
	}
	return out
}

// sortedJSON marshals with object keys sorted (encoding/json sorts map
// keys) and without HTML escaping, which a shell command does not need.
func sortedJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// shellQuote quotes s as one word for a POSIX shell: inside single quotes
// nothing is special but the single quote itself, which ends the quoted
// part, is escaped, and starts a new one.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
