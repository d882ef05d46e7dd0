package nmstate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
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

// Config is spec.kubernetesNMState of network.operator.openshift.io/cluster.
type Config struct {
	Mode Mode
	// NodeSelector and Tolerations place the handler DaemonSet. Nil means the
	// default: every Linux node, every taint tolerated.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// The field names below are the API; they are repeated in messages so a user
// can find the bad value in `oc edit network.operator cluster`.
const (
	fieldRoot      = "spec.kubernetesNMState"
	fieldMode      = "spec.kubernetesNMState.mode"
	fieldPlacement = "spec.kubernetesNMState.handlerPlacement"
)

var validModes = []Mode{ModeEnabled, ModeDisabled}

// ConfigFromNetwork reads spec.kubernetesNMState from the Network operator
// config. An absent field means the defaults. Anything the CRD schema would
// have rejected (an older CRD without the enum may have let it through) is an
// *Error with ReasonInvalidConfig naming the bad value and the valid ones.
func ConfigFromNetwork(network *unstructured.Unstructured) (Config, error) {
	if network == nil {
		return Config{}, nil
	}
	raw, found, err := unstructured.NestedFieldNoCopy(network.Object, "spec", "kubernetesNMState")
	if err != nil {
		return Config{}, inputError(ReasonInvalidConfig, "spec must be an object: %v", err)
	}
	if !found || raw == nil {
		return Config{}, nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return Config{}, inputError(ReasonInvalidConfig,
			"%s must be an object with an optional mode (%s) and handlerPlacement, got %s",
			fieldRoot, modeList(), quote(raw))
	}
	if err := onlyFields(fieldRoot, obj, "mode", "handlerPlacement"); err != nil {
		return Config{}, err
	}

	var cfg Config
	if cfg.Mode, err = parseMode(obj["mode"]); err != nil {
		return Config{}, err
	}
	if p, found := obj["handlerPlacement"]; found && p != nil {
		if cfg.NodeSelector, cfg.Tolerations, err = parsePlacement(p); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

func modeList() string {
	s := make([]string, len(validModes))
	for i, m := range validModes {
		s[i] = fmt.Sprintf("%q", m)
	}
	return strings.Join(s, " or ") + " (or omit it for the platform default)"
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
	return "", inputError(ReasonInvalidConfig, "%s is %s; valid values are %s%s", fieldMode, quote(s), modeList(), CaseHint(s, validModes))
}

func parsePlacement(v any) (map[string]string, []corev1.Toleration, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, inputError(ReasonInvalidConfig,
			"%s must be an object with nodeSelector and tolerations, got %s", fieldPlacement, quote(v))
	}
	if err := onlyFields(fieldPlacement, obj, "nodeSelector", "tolerations"); err != nil {
		return nil, nil, err
	}
	selector, err := parseNodeSelector(obj["nodeSelector"])
	if err != nil {
		return nil, nil, err
	}
	tolerations, err := parseTolerations(obj["tolerations"])
	if err != nil {
		return nil, nil, err
	}
	return selector, tolerations, nil
}

func parseNodeSelector(v any) (map[string]string, error) {
	const field = fieldPlacement + ".nodeSelector"
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
			return nil, inputError(ReasonInvalidConfig, "%s[%s] is %s; the handler runs on Linux nodes only, so it can only be \"linux\" (or omitted)", field, quote(k), quote(s))
		}
		selector[k] = s
	}
	return selector, nil
}

func parseTolerations(v any) ([]corev1.Toleration, error) {
	const field = fieldPlacement + ".tolerations"
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
