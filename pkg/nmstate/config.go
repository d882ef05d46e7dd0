package nmstate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	operv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cno-nmstate/cno-nmstate/internal/hint"
)

// Mode is spec.kubernetesNMState.mode. It is an enum rather than a bool so
// that "not set" stays distinguishable from "off" and the platform default can
// change between releases without touching anybody's config.
type Mode string

const (
	ModeEnabled  Mode = "Enabled"
	ModeDisabled Mode = "Disabled"
	// ModeDefault (omitted) follows the platform default.
	ModeDefault Mode = ""
)

// Config is spec.kubernetesNMState of network.operator.openshift.io/cluster,
// with spec.logLevel, which the handler's verbosity follows.
type Config struct {
	Mode Mode
	// Handler places the handler DaemonSet. Nil fields mean the defaults:
	// every Linux node, every taint tolerated, no affinity.
	Handler Placement
	// Infra places the webhook and every other Deployment. Nil fields mean
	// the defaults, which depend on the control plane topology (renderParams).
	Infra Placement
	// ProbeDNSHost is the name the handler's DNS probe resolves; empty means
	// upstream's default.
	ProbeDNSHost string
	// LogLevel is spec.logLevel; empty means Normal.
	LogLevel operv1.LogLevel
}

// Placement is where a workload's pods may run.
type Placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Affinity     *corev1.Affinity
}

// The field names below are the API; they are repeated in messages so a user
// can find the bad value in `oc edit network.operator cluster`.
const (
	fieldRoot           = "spec.kubernetesNMState"
	fieldMode           = "spec.kubernetesNMState.mode"
	fieldPlacement      = "spec.kubernetesNMState.handlerPlacement"
	fieldInfraPlacement = "spec.kubernetesNMState.infraPlacement"
	fieldProbes         = "spec.kubernetesNMState.probes"
	fieldLogLevel       = "spec.logLevel"
)

// rootFields are the fields of spec.kubernetesNMState.
var rootFields = []string{"mode", "handlerPlacement", "infraPlacement", "probes"}

// validLogLevels are spec.logLevel's values; empty is Normal.
var validLogLevels = []operv1.LogLevel{operv1.Normal, operv1.Debug, operv1.Trace, operv1.TraceAll}

var validModes = []Mode{ModeEnabled, ModeDisabled}

// ConfigFromNetwork reads spec.kubernetesNMState from the Network operator
// config. An absent field means the defaults. Anything the CRD schema would
// have rejected (an older CRD without the enum may have let it through) is an
// *InputError with ReasonInvalidConfig naming the bad value and the valid ones.
func ConfigFromNetwork(network *unstructured.Unstructured) (Config, error) {
	if network == nil {
		return Config{}, nil
	}
	var cfg Config
	level, _, err := unstructured.NestedFieldNoCopy(network.Object, "spec", "logLevel")
	if err != nil {
		return Config{}, inputError(ReasonInvalidConfig, "spec must be an object: %v", err)
	}
	if cfg.LogLevel, err = parseLogLevel(level); err != nil {
		return Config{}, err
	}
	raw, found, err := unstructured.NestedFieldNoCopy(network.Object, "spec", "kubernetesNMState")
	if err != nil {
		return Config{}, inputError(ReasonInvalidConfig, "spec must be an object: %v", err)
	}
	if !found || raw == nil {
		return cfg, nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return Config{}, inputError(ReasonInvalidConfig,
			"%s must be an object with the optional fields %s, got %s",
			fieldRoot, strings.Join(rootFields, ", "), quote(raw))
	}
	if err := onlyFields(fieldRoot, obj, rootFields...); err != nil {
		return Config{}, err
	}

	if cfg.Mode, err = parseMode(obj["mode"]); err != nil {
		return Config{}, err
	}
	if cfg.Handler, err = parsePlacement(fieldPlacement, "the handler runs", obj["handlerPlacement"]); err != nil {
		return Config{}, err
	}
	if cfg.Infra, err = parsePlacement(fieldInfraPlacement, "the webhook and metrics images run", obj["infraPlacement"]); err != nil {
		return Config{}, err
	}
	if cfg.ProbeDNSHost, err = parseProbes(obj["probes"]); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func parseLogLevel(v any) (operv1.LogLevel, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if ok && (s == "" || slices.Contains(validLogLevels, operv1.LogLevel(s))) {
		return operv1.LogLevel(s), nil
	}
	caseHint := ""
	if ok {
		caseHint = hint.Case(s, validLogLevels)
	}
	return "", inputError(ReasonInvalidConfig, "%s is %s; valid values are %s (or omit it for Normal)%s",
		fieldLogLevel, quote(v), strings.Join(quoted(validLogLevels), ", "), caseHint)
}

// Verbose says whether the handler logs at debug level, with verbose
// nmstatectl output: what the standalone operator's logLevel "debug" does.
func (c Config) Verbose() bool {
	return c.LogLevel != "" && c.LogLevel != operv1.Normal
}

func parseProbes(v any) (string, error) {
	const field = fieldProbes + ".dnsHost"
	if v == nil {
		return "", nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", inputError(ReasonInvalidConfig, "%s must be an object with dnsHost, got %s", fieldProbes, quote(v))
	}
	if err := onlyFields(fieldProbes, obj, "dnsHost"); err != nil {
		return "", err
	}
	if obj["dnsHost"] == nil {
		return "", nil
	}
	host, ok := obj["dnsHost"].(string)
	if !ok {
		return "", inputError(ReasonInvalidConfig, "%s must be a host name, got %s", field, quote(obj["dnsHost"]))
	}
	if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
		return "", inputError(ReasonInvalidConfig, "%s is %s, not a lowercase DNS name: %s", field, quote(host), strings.Join(errs, "; "))
	}
	// IsDNS1123Subdomain bounds the whole name only; a resolver refuses a
	// label longer than 63 characters (RFC 1035).
	for _, label := range strings.Split(host, ".") {
		if len(label) > validation.DNS1123LabelMaxLength {
			return "", inputError(ReasonInvalidConfig, "%s is %s, not a DNS name: its label %s has %d characters, at most %d are valid",
				field, quote(host), quote(label), len(label), validation.DNS1123LabelMaxLength)
		}
	}
	return host, nil
}

func modeList() string {
	return strings.Join(quoted(validModes), " or ") + " (or omit it for the platform default)"
}

// quoted is each of values in double quotes, as messages list valid values.
func quoted[T ~string](values []T) []string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprintf("%q", v)
	}
	return s
}

func parseMode(v any) (Mode, error) {
	if v == nil {
		return ModeDefault, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", inputError(ReasonInvalidConfig, "%s is %s; valid values are %s", fieldMode, quote(v), modeList())
	}
	if s == "" {
		return ModeDefault, nil
	}
	for _, m := range validModes {
		if Mode(s) == m {
			return m, nil
		}
	}
	return "", inputError(ReasonInvalidConfig, "%s is %s; valid values are %s%s", fieldMode, quote(s), modeList(), hint.Case(s, validModes))
}

// parsePlacement reads the placement at field; linuxOnly says in a message
// who runs on Linux nodes only.
func parsePlacement(field, linuxOnly string, v any) (Placement, error) {
	if v == nil {
		return Placement{}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Placement{}, inputError(ReasonInvalidConfig,
			"%s must be an object with nodeSelector, tolerations and affinity, got %s", field, quote(v))
	}
	if err := onlyFields(field, obj, "nodeSelector", "tolerations", "affinity"); err != nil {
		return Placement{}, err
	}
	var p Placement
	var err error
	if p.NodeSelector, err = parseNodeSelector(field+".nodeSelector", linuxOnly, obj["nodeSelector"]); err != nil {
		return Placement{}, err
	}
	if p.Tolerations, err = parseTolerations(field+".tolerations", obj["tolerations"]); err != nil {
		return Placement{}, err
	}
	if p.Affinity, err = parseAffinity(field+".affinity", obj["affinity"]); err != nil {
		return Placement{}, err
	}
	return p, nil
}

func parseNodeSelector(field, linuxOnly string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, inputError(ReasonInvalidConfig, "%s must be a map of label keys to values, got %s", field, quote(v))
	}
	selector := make(map[string]string, len(obj))
	for _, k := range sortedKeys(obj) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, inputError(ReasonInvalidConfig, "%s has an invalid label key %s: %s", field, quote(k), strings.Join(errs, "; "))
		}
		s, ok := obj[k].(string)
		if !ok {
			return nil, inputError(ReasonInvalidConfig, "%s[%s] must be a string, got %s", field, quote(k), quote(obj[k]))
		}
		if errs := validation.IsValidLabelValue(s); len(errs) > 0 {
			return nil, inputError(ReasonInvalidConfig, "%s[%s] has an invalid label value %s: %s", field, quote(k), quote(s), strings.Join(errs, "; "))
		}
		if k == linuxLabel && s != "linux" {
			return nil, inputError(ReasonInvalidConfig, "%s[%s] is %s; %s on Linux nodes only, so it can only be \"linux\" (or omitted)", field, quote(k), quote(s), linuxOnly)
		}
		selector[k] = s
	}
	return selector, nil
}

func parseTolerations(field string, v any) ([]corev1.Toleration, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, inputError(ReasonInvalidConfig, "%s must be a list of tolerations, got %s", field, quote(v))
	}
	out := make([]corev1.Toleration, 0, len(list))
	for i, item := range list {
		itemField := fmt.Sprintf("%s[%d]", field, i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, inputError(ReasonInvalidConfig, "%s must be a toleration object, got %s", itemField, quote(item))
		}
		var t corev1.Toleration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, &t, true); err != nil {
			return nil, inputError(ReasonInvalidConfig, "%s is not a valid toleration (fields: key, operator, value, effect, tolerationSeconds): %s", itemField, quote(err.Error()))
		}
		if err := validateToleration(t); err != nil {
			return nil, inputError(ReasonInvalidConfig, "%s: %v", itemField, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// validateToleration applies the rules the API server applies to a pod's
// tolerations, so a bad one is reported here instead of as a DaemonSet that
// the server refuses.
func validateToleration(t corev1.Toleration) error {
	if t.Key != "" {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("key %s is invalid: %s", quote(t.Key), strings.Join(errs, "; "))
		}
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			return fmt.Errorf("operator %q needs a key; use operator \"Exists\" with no key to tolerate every taint", corev1.TolerationOpEqual)
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("value %s is invalid: %s", quote(t.Value), strings.Join(errs, "; "))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			return fmt.Errorf("operator \"Exists\" takes no value, got %s", quote(t.Value))
		}
	default:
		return fmt.Errorf("operator %s is invalid; valid operators are \"Exists\" and \"Equal\"", quote(string(t.Operator)))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return fmt.Errorf("effect %s is invalid; valid effects are \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\" or empty for all", quote(string(t.Effect)))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		return fmt.Errorf("tolerationSeconds is only valid with effect \"NoExecute\"")
	}
	return nil
}

// onlyFields rejects unknown fields: a misspelt "Mode" silently meaning
// "platform default" is exactly the surprise this API must not have.
func onlyFields(field string, obj map[string]any, allowed ...string) error {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			return inputError(ReasonInvalidConfig, "%s has an unknown field %s; valid fields are %s", field, quote(k), strings.Join(allowed, ", "))
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
