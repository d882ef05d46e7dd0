// Command schemacheck compares spec.kubernetesNMState of this project's
// Network.operator CRDs (manifests/) with the CRDs that the patched
// openshift/api generates, feature set by feature set: the field must exist in
// the same feature sets and its schema (CEL rules included) must be equal in
// every version. It is run by hack/openshift-api-check.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"
)

var featureSets = []string{"Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD"}

const crdFile = "0000_70_network_01_networks-%s.crd.yaml"

func main() {
	apiDir := flag.String("api", "", "the patched openshift/api checkout")
	manifests := flag.String("manifests", "manifests", "this project's manifests directory")
	flag.Parse()
	if *apiDir == "" {
		fmt.Fprintln(os.Stderr, "schemacheck: -api is required")
		os.Exit(2)
	}
	with, err := run(filepath.Join(*apiDir, "operator/v1/zz_generated.crd-manifests"), *manifests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemacheck:", err)
		os.Exit(1)
	}
	// The last line is read by hack/openshift-api-check.sh.
	fmt.Printf("schemacheck: spec.kubernetesNMState in sync for %d feature sets (present in %s; absent in the others)\n",
		len(with), strings.Join(with, ", "))
}

// run returns the feature sets that carry the field, or an error listing
// every difference.
func run(apiCRDs, manifests string) ([]string, error) {
	var with, problems []string
	for _, set := range featureSets {
		name := fmt.Sprintf(crdFile, set)
		want, err := fieldSchemas(filepath.Join(apiCRDs, name))
		if err != nil {
			return nil, err
		}
		got, err := fieldSchemas(filepath.Join(manifests, name))
		if err != nil {
			return nil, err
		}
		if len(want) != len(got) {
			problems = append(problems, fmt.Sprintf("%s: openshift/api has %d versions, manifests/ %d", set, len(want), len(got)))
			continue
		}
		present := false
		for version, w := range want {
			g, ok := got[version]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: manifests/ has no version %s", set, version))
			case w == nil && g != nil:
				problems = append(problems, fmt.Sprintf("%s %s: manifests/ has spec.kubernetesNMState, openshift/api does not", set, version))
			case w != nil && g == nil:
				problems = append(problems, fmt.Sprintf("%s %s: openshift/api has spec.kubernetesNMState, manifests/ does not", set, version))
			case !reflect.DeepEqual(w, g):
				problems = append(problems, fmt.Sprintf("%s %s: spec.kubernetesNMState differs:\n%s", set, version, diff(w, g)))
			case w != nil:
				present = true
			}
		}
		if present {
			with = append(with, set)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("manifests/ and openshift/api disagree (edit hack/network-crd/kubernetesnmstate.schema.yaml or hack/generate.sh, then make generate):\n- %s",
			strings.Join(problems, "\n- "))
	}
	if len(with) == 0 {
		return nil, fmt.Errorf("no feature set has spec.kubernetesNMState: is the patch applied?")
	}
	return with, nil
}

// fieldSchemas maps each version of the CRD at path to its
// spec.kubernetesNMState schema, nil when the version has none.
func fieldSchemas(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return nil, fmt.Errorf("%s: no versions", path)
	}
	out := map[string]any{}
	for _, v := range versions {
		name, _ := dig(v, "name").(string)
		props, ok := dig(v, "schema", "openAPIV3Schema", "properties", "spec", "properties").(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: version %q has no spec properties", path, name)
		}
		out[name] = props["kubernetesNMState"]
	}
	return out, nil
}

func dig(obj any, path ...string) any {
	for _, p := range path {
		m, ok := obj.(map[string]any)
		if !ok {
			return nil
		}
		obj = m[p]
	}
	return obj
}

// diff shows both sides as YAML, line by line where they differ.
func diff(want, got any) string {
	w, _ := yaml.Marshal(want)
	g, _ := yaml.Marshal(got)
	wl, gl := strings.Split(string(w), "\n"), strings.Split(string(g), "\n")
	var b strings.Builder
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var a, c string
		if i < len(wl) {
			a = wl[i]
		}
		if i < len(gl) {
			c = gl[i]
		}
		if a != c {
			fmt.Fprintf(&b, "  line %d\n    openshift/api: %s\n    manifests/:    %s\n", i+1, a, c)
		}
	}
	return b.String()
}
