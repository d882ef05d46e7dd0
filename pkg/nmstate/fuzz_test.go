package nmstate

// Fuzz targets for everything the plugin reads from the cluster. Run them
// with hack/fuzz.sh (or `go test -fuzz FuzzConfigFromNetwork ./pkg/nmstate`);
// without -fuzz, `go test` runs the seed corpora in testdata/fuzz/.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// errorMessageLimit bounds an error message whatever the input: it becomes a
// condition message, and a megabyte of garbage in the config must not
// become a megabyte condition.
const errorMessageLimit = 1024

// fuzzMaxInput keeps single executions fast; quote() truncation is exercised
// well below it.
const fuzzMaxInput = 64 << 10

// decodeLikeTheServer turns YAML or JSON into what an unstructured object
// from the API server holds: integers as int64, other numbers as float64.
func decodeLikeTheServer(data []byte) (any, bool) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, false
	}
	var v any
	if err := utiljson.Unmarshal(js, &v); err != nil {
		return nil, false
	}
	return v, true
}

// validNMState is an independent statement of what spec.kubernetesNMState
// accepts (the API, in docs/user-guide.md and the CRD schema), to hold
// ConfigFromNetwork to: it returns "" when v is valid, else why not.
func validNMState(v any) string {
	if v == nil {
		return ""
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "not an object"
	}
	for k := range obj {
		if !slices.Contains([]string{"mode", "handlerPlacement", "infraPlacement", "probes"}, k) {
			return "unknown field " + k
		}
	}
	switch mode := obj["mode"].(type) {
	case nil:
	case string:
		if mode != "" && mode != "Enabled" && mode != "Disabled" {
			return "mode " + mode
		}
	default:
		return "mode is not a string"
	}
	for _, name := range []string{"handlerPlacement", "infraPlacement"} {
		if why := validPlacement(obj[name]); why != "" {
			return name + ": " + why
		}
	}
	if obj["probes"] != nil {
		probes, ok := obj["probes"].(map[string]any)
		if !ok {
			return "probes is not an object"
		}
		for k, v := range probes {
			host, ok := v.(string)
			switch {
			case k != "dnsHost":
				return "unknown probes field " + k
			case v == nil:
			case !ok:
				return "dnsHost is not a string"
			case len(validation.IsDNS1123Subdomain(host)) > 0:
				return "dnsHost " + host
			}
		}
	}
	return ""
}

// validPlacement holds a placement to the rules; an affinity is only
// required to be an object here (its rules are Kubernetes' own, tested
// table by table), and the fuzz target does not hold ConfigFromNetwork to
// this oracle when one is set.
func validPlacement(v any) string {
	if v == nil {
		return ""
	}
	placement, ok := v.(map[string]any)
	if !ok {
		return "not an object"
	}
	for k := range placement {
		if k != "nodeSelector" && k != "tolerations" && k != "affinity" {
			return "unknown placement field " + k
		}
	}
	if a := placement["affinity"]; a != nil {
		if _, ok := a.(map[string]any); !ok {
			return "affinity is not an object"
		}
	}
	if sel := placement["nodeSelector"]; sel != nil {
		m, ok := sel.(map[string]any)
		if !ok {
			return "nodeSelector is not an object"
		}
		for k, v := range m {
			s, ok := v.(string)
			switch {
			case len(validation.IsQualifiedName(k)) > 0:
				return "label key " + k
			case !ok:
				return "label value not a string"
			case len(validation.IsValidLabelValue(s)) > 0:
				return "label value " + s
			case k == "kubernetes.io/os" && s != "linux":
				return "not linux"
			}
		}
	}
	if tols := placement["tolerations"]; tols != nil {
		list, ok := tols.([]any)
		if !ok {
			return "tolerations is not a list"
		}
		for _, item := range list {
			if why := validToleration(item); why != "" {
				return why
			}
		}
	}
	return ""
}

// hasAffinity says whether spec.kubernetesNMState v sets an affinity object.
func hasAffinity(v any) bool {
	obj, _ := v.(map[string]any)
	for _, name := range []string{"handlerPlacement", "infraPlacement"} {
		if p, ok := obj[name].(map[string]any); ok {
			if _, ok := p["affinity"].(map[string]any); ok {
				return true
			}
		}
	}
	return false
}

func validToleration(item any) string {
	m, ok := item.(map[string]any)
	if !ok {
		return "toleration is not an object"
	}
	str := map[string]string{}
	for k, v := range m {
		switch k {
		case "key", "operator", "value", "effect":
			s, ok := v.(string)
			if v != nil && !ok {
				return "toleration " + k + " is not a string"
			}
			str[k] = s
		case "tolerationSeconds":
			switch n := v.(type) {
			case nil, int64:
			case float64:
				// The unstructured converter takes a whole float as an integer.
				if n != float64(int64(n)) {
					return "tolerationSeconds is not an integer"
				}
			default:
				return "tolerationSeconds is not a number"
			}
		default:
			return "unknown toleration field " + k
		}
	}
	if str["key"] != "" && len(validation.IsQualifiedName(str["key"])) > 0 {
		return "toleration key"
	}
	switch str["operator"] {
	case "", "Equal":
		if str["key"] == "" {
			return "Equal needs a key"
		}
		if len(validation.IsValidLabelValue(str["value"])) > 0 {
			return "toleration value"
		}
	case "Exists":
		if str["value"] != "" {
			return "Exists with a value"
		}
	default:
		return "operator " + str["operator"]
	}
	if !slices.Contains([]string{"", "NoSchedule", "PreferNoSchedule", "NoExecute"}, str["effect"]) {
		return "effect " + str["effect"]
	}
	if m["tolerationSeconds"] != nil && str["effect"] != "NoExecute" {
		return "tolerationSeconds without NoExecute"
	}
	return ""
}

// configToNMState writes a Config back as spec.kubernetesNMState.
func configToNMState(t *testing.T, cfg Config) map[string]any {
	out := map[string]any{}
	if cfg.Mode != ModeDefault {
		out["mode"] = string(cfg.Mode)
	}
	if p := placementToMap(t, cfg.Handler); p != nil {
		out["handlerPlacement"] = p
	}
	if p := placementToMap(t, cfg.Infra); p != nil {
		out["infraPlacement"] = p
	}
	if cfg.ProbeDNSHost != "" {
		out["probes"] = map[string]any{"dnsHost": cfg.ProbeDNSHost}
	}
	return out
}

func placementToMap(t *testing.T, p Placement) map[string]any {
	if p.NodeSelector == nil && p.Tolerations == nil && p.Affinity == nil {
		return nil
	}
	placement := map[string]any{}
	if p.NodeSelector != nil {
		sel := map[string]any{}
		for k, v := range p.NodeSelector {
			sel[k] = v
		}
		placement["nodeSelector"] = sel
	}
	if p.Tolerations != nil {
		list := []any{}
		for i := range p.Tolerations {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.Tolerations[i])
			require.NoError(t, err)
			list = append(list, m)
		}
		placement["tolerations"] = list
	}
	if p.Affinity != nil {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.Affinity)
		require.NoError(t, err)
		placement["affinity"] = m
	}
	return placement
}

// FuzzConfigFromNetwork feeds arbitrary YAML or JSON as
// spec.kubernetesNMState. ConfigFromNetwork must never panic; it must fail
// exactly when the input is invalid, with an InvalidConfig error of bounded
// length; and what it accepts must survive a write-back and re-read, as
// unstructured and through JSON, unchanged.
func FuzzConfigFromNetwork(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			return
		}
		v, ok := decodeLikeTheServer(data)
		if !ok {
			return
		}
		cfg, err := ConfigFromNetwork(withNMState(v))
		why := validNMState(v)
		// An affinity's validity is Kubernetes' rules, beyond this oracle.
		oracle := !hasAffinity(v)
		if err != nil {
			require.Equal(t, ReasonInvalidConfig, ReasonOf(err), "%v", err)
			require.LessOrEqual(t, len(err.Error()), errorMessageLimit, "unbounded message: %.300s", err)
			if oracle {
				require.NotEmpty(t, why, "a valid config was refused: %v", err)
			}
			return
		}
		require.Empty(t, why, "an invalid config was accepted: %s", why)
		require.Contains(t, []Mode{ModeDefault, ModeEnabled, ModeDisabled}, cfg.Mode)

		back := configToNMState(t, cfg)
		again, err := ConfigFromNetwork(withNMState(back))
		require.NoError(t, err, "re-reading %v", back)
		require.Equal(t, cfg, again, "write-back and re-read")

		js, err := json.Marshal(back)
		require.NoError(t, err)
		decoded, ok := decodeLikeTheServer(js)
		require.True(t, ok)
		again, err = ConfigFromNetwork(withNMState(decoded))
		require.NoError(t, err, "re-reading %s", js)
		require.Equal(t, cfg, again, "through JSON")
	})
}

// referenceLike is the character set of a container image reference
// (registry, path, tag, digest): nothing a YAML double-quoted string would
// interpret.
var referenceLike = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$`)

// FuzzDecideRender drives InfrastructureOf, ConfigFromNetwork, decide and
// Render with arbitrary platform, topologies, mode, flags, image
// and one node selector entry. None may panic; each refuses exactly the
// inputs it must; and an enabled decision with an image renders objects that
// all carry the owner label, with the image and the selector as given.
func FuzzDecideRender(f *testing.F) {
	f.Fuzz(func(t *testing.T, platform, controlPlane, infraTopology, mode string, standalone, gate bool, image, selectorKey, selectorValue string) {
		if len(platform)+len(controlPlane)+len(infraTopology)+len(mode)+len(image)+len(selectorKey)+len(selectorValue) > fuzzMaxInput {
			return
		}
		infra := &configv1.Infrastructure{Status: configv1.InfrastructureStatus{
			PlatformStatus:         &configv1.PlatformStatus{Type: configv1.PlatformType(platform)},
			ControlPlaneTopology:   configv1.TopologyMode(controlPlane),
			InfrastructureTopology: configv1.TopologyMode(infraTopology),
		}}
		in := Input{Infrastructure: InfrastructureOf(infra), DefaultOnGate: gate,
			Images: Images{Handler: image, ReleaseVersion: "4.99.0"}, ManifestDir: manifestDir}
		if standalone {
			in.State.Other.ManagedBy = standaloneOperator
		}
		cluster := newCluster(in)
		require.Equal(t, configv1.PlatformType(platform), cluster.Platform, "the platform as given, known or not")

		spec := map[string]any{"mode": mode}
		if selectorKey != "" {
			spec["handlerPlacement"] = map[string]any{"nodeSelector": map[string]any{selectorKey: selectorValue}}
		}
		cfg, cfgErr := ConfigFromNetwork(withNMState(spec))
		if why := validNMState(spec); why != "" {
			require.Error(t, cfgErr, "an invalid config was accepted: %s", why)
			cfg = Config{Mode: Mode(mode)}
		} else {
			require.NoError(t, cfgErr)
		}

		d := decide(cfg, cluster)
		require.NotEmpty(t, d.Reason)
		require.NotEmpty(t, d.Message)
		switch {
		case standalone:
			require.Equal(t, ReasonManagedElsewhere, d.Reason)
			require.False(t, d.Enabled, "never a second handler")
		case cfg.Mode == ModeEnabled:
			require.Equal(t, Decision{Enabled: true, Reason: ReasonUserEnabled, Message: d.Message}, d)
		case cfg.Mode == ModeDisabled:
			require.Equal(t, ReasonUserDisabled, d.Reason)
			require.False(t, d.Enabled)
		case !gate:
			require.Equal(t, Decision{Reason: ReasonDefaultGateOff, Message: d.Message}, d)
		case cluster.ControlPlaneTopology == configv1.ExternalTopologyMode:
			require.Equal(t, Decision{Reason: ReasonPlatformNotDefault, Message: d.Message}, d)
		case slices.Contains(defaultOnPlatforms, cluster.Platform):
			require.Equal(t, Decision{Enabled: true, Reason: ReasonPlatformDefault, Message: d.Message}, d)
		default:
			require.Equal(t, Decision{Reason: ReasonPlatformNotDefault, Message: d.Message}, d, "unknown and empty platforms are off by default")
		}
		require.Contains(t, d.Message, cluster.platformName(), "the message names the platform")
		require.LessOrEqual(t, len(d.Message), errorMessageLimit, "unbounded message: %.300s", d.Message)
		if cfgErr != nil {
			return // the host stops here: nothing is rendered
		}

		in.Network = withNMState(spec)
		res := Render(in)
		require.Equal(t, d, res.Decision, "Render decides as decide does")
		objs, err := res.Objects, res.Err
		switch {
		case !d.Enabled:
			require.NoError(t, err)
			require.Nil(t, objs)
			return
		case image == "":
			require.Equal(t, ReasonMissingImage, ReasonOf(err), "%v", err)
			require.Nil(t, objs)
			return
		case !referenceLike.MatchString(image):
			// Not an image reference: the template may refuse it, but must not panic.
			if err != nil {
				return
			}
		default:
			require.NoError(t, err, "image %q", image)
		}
		require.NotEmpty(t, objs)
		for _, obj := range objs {
			require.NotEmpty(t, obj.GetKind())
			require.NotEmpty(t, obj.GetName())
			require.Equal(t, PluginVersion, obj.GetLabels()[OwnerLabel], "%s %s", obj.GetKind(), obj.GetName())
		}
		// Whatever the image string, once rendered it is exactly the image of
		// every container: toJson leaves no way to break out of the value.
		ds := &appsv1.DaemonSet{}
		dep := &appsv1.Deployment{}
		for _, obj := range objs {
			switch {
			case obj.GetKind() == "DaemonSet" && obj.GetName() == HandlerDaemonSet:
				require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ds))
			case obj.GetKind() == "Deployment" && obj.GetName() == WebhookDeployment:
				require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, dep))
			}
		}
		for _, c := range append(append([]corev1.Container{}, ds.Spec.Template.Spec.Containers...), dep.Spec.Template.Spec.Containers...) {
			if utf8.ValidString(image) { // JSON turns invalid UTF-8 into U+FFFD
				require.Equal(t, image, c.Image, "container %s", c.Name)
			}
		}
		require.Equal(t, "linux", ds.Spec.Template.Spec.NodeSelector["kubernetes.io/os"])
		if selectorKey != "" {
			require.Equal(t, selectorValue, ds.Spec.Template.Spec.NodeSelector[selectorKey], "the selector entry as given: %s", fmt.Sprint(ds.Spec.Template.Spec.NodeSelector))
		}
		_, leaked := dep.Spec.Template.Spec.NodeSelector[selectorKey]
		require.False(t, leaked && selectorKey != "kubernetes.io/os", "the handler's placement leaked into the webhook")
	})
}
