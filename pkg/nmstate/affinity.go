package nmstate

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// parseAffinity reads a Pod-style affinity. Its schema is Kubernetes' own,
// so it is checked here by the rules the API server applies to a pod's
// affinity: a bad one is reported on the Network, naming the field, instead
// of as a workload the server refuses.
func parseAffinity(fieldPath string, v any) (*corev1.Affinity, error) {
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, inputError(ReasonInvalidConfig, "%s must be an object with nodeAffinity, podAffinity or podAntiAffinity, got %s", fieldPath, quote(v))
	}
	var a corev1.Affinity
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, &a, true); err != nil {
		return nil, inputError(ReasonInvalidConfig, "%s is not a valid affinity (a Pod's spec.affinity: nodeAffinity, podAffinity, podAntiAffinity): %s", fieldPath, quote(err.Error()))
	}
	if err := validateAffinity(field.NewPath(fieldPath), &a); err != nil {
		return nil, inputError(ReasonInvalidConfig, "%v", err)
	}
	return &a, nil
}

func validateAffinity(p *field.Path, a *corev1.Affinity) error {
	if n := a.NodeAffinity; n != nil {
		np := p.Child("nodeAffinity")
		if r := n.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			rp := np.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(r.NodeSelectorTerms) == 0 {
				return fmt.Errorf("%s must have at least one term", rp)
			}
			for i, term := range r.NodeSelectorTerms {
				if err := validateNodeSelectorTerm(rp.Index(i), term); err != nil {
					return err
				}
			}
		}
		for i, pref := range n.PreferredDuringSchedulingIgnoredDuringExecution {
			pp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if err := validateWeight(pp, pref.Weight); err != nil {
				return err
			}
			if err := validateNodeSelectorTerm(pp.Child("preference"), pref.Preference); err != nil {
				return err
			}
		}
	}
	if pa := a.PodAffinity; pa != nil {
		if err := validatePodTerms(p.Child("podAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return err
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if err := validatePodTerms(p.Child("podAntiAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return err
		}
	}
	return nil
}

func validateWeight(p *field.Path, w int32) error {
	if w < 1 || w > 100 {
		return fmt.Errorf("%s is %d; it must be between 1 and 100", p.Child("weight"), w)
	}
	return nil
}

func validateNodeSelectorTerm(p *field.Path, term corev1.NodeSelectorTerm) error {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return fmt.Errorf("%s must have matchExpressions or matchFields", p)
	}
	for i, r := range term.MatchExpressions {
		if err := validateNodeRequirement(p.Child("matchExpressions").Index(i), r, false); err != nil {
			return err
		}
	}
	for i, r := range term.MatchFields {
		if err := validateNodeRequirement(p.Child("matchFields").Index(i), r, true); err != nil {
			return err
		}
	}
	return nil
}

// validateNodeRequirement: a node's fields can only be matched by
// metadata.name with In or NotIn and one value, as the API server requires.
func validateNodeRequirement(p *field.Path, r corev1.NodeSelectorRequirement, onFields bool) error {
	if onFields {
		if r.Key != "metadata.name" {
			return fmt.Errorf("%s is %s; the only node field that can be matched is \"metadata.name\"", p.Child("key"), quote(r.Key))
		}
		if (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) || len(r.Values) != 1 {
			return fmt.Errorf("%s must use operator \"In\" or \"NotIn\" with exactly one value", p)
		}
		return nil
	}
	if errs := validation.IsQualifiedName(r.Key); len(errs) > 0 {
		return fmt.Errorf("%s %s is not a valid label key: %s", p.Child("key"), quote(r.Key), strings.Join(errs, "; "))
	}
	values := p.Child("values")
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return fmt.Errorf("%s must not be empty with operator %q", values, r.Operator)
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return fmt.Errorf("%s must be empty with operator %q", values, r.Operator)
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return fmt.Errorf("%s must have exactly one value with operator %q", values, r.Operator)
		}
		if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			return fmt.Errorf("%s %s must be an integer with operator %q", values, quote(r.Values[0]), r.Operator)
		}
	default:
		return fmt.Errorf("%s is %s; valid operators are \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\" and \"Lt\"", p.Child("operator"), quote(string(r.Operator)))
	}
	for i, v := range r.Values {
		if r.Operator == corev1.NodeSelectorOpIn || r.Operator == corev1.NodeSelectorOpNotIn {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return fmt.Errorf("%s %s is not a valid label value: %s", values.Index(i), quote(v), strings.Join(errs, "; "))
			}
		}
	}
	return nil
}

func validatePodTerms(p *field.Path, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) error {
	for i, term := range required {
		if err := validatePodTerm(p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i), term); err != nil {
			return err
		}
	}
	for i, w := range preferred {
		pp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if err := validateWeight(pp, w.Weight); err != nil {
			return err
		}
		if err := validatePodTerm(pp.Child("podAffinityTerm"), w.PodAffinityTerm); err != nil {
			return err
		}
	}
	return nil
}

func validatePodTerm(p *field.Path, term corev1.PodAffinityTerm) error {
	if term.TopologyKey == "" {
		return fmt.Errorf("%s is required, e.g. \"kubernetes.io/hostname\"", p.Child("topologyKey"))
	}
	if errs := validation.IsQualifiedName(term.TopologyKey); len(errs) > 0 {
		return fmt.Errorf("%s %s is not a valid label key: %s", p.Child("topologyKey"), quote(term.TopologyKey), strings.Join(errs, "; "))
	}
	selectors := []struct {
		name string
		sel  *metav1.LabelSelector
	}{{"labelSelector", term.LabelSelector}, {"namespaceSelector", term.NamespaceSelector}}
	for _, s := range selectors {
		opts := metav1validation.LabelSelectorValidationOptions{}
		if errs := metav1validation.ValidateLabelSelector(s.sel, opts, p.Child(s.name)); len(errs) > 0 {
			return errs.ToAggregate()
		}
	}
	for i, ns := range term.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("%s %s is not a valid namespace name: %s", p.Child("namespaces").Index(i), quote(ns), strings.Join(errs, "; "))
		}
	}
	return nil
}
