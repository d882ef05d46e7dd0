package nmstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The release tooling finds the env var's value by the image-references
// pullspec: the two must agree, and the variable must be the one ImagesFromEnv reads.
func TestImageReferencesMatchDeploymentEnv(t *testing.T) {
	var refs struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Tags []struct {
				Name string `json:"name"`
				From struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"from"`
			} `json:"tags"`
		} `json:"spec"`
	}
	data, err := os.ReadFile("../../manifests/image-references")
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, &refs))
	images := map[string]string{}
	for _, tag := range refs.Spec.Tags {
		images[tag.Name] = tag.From.Name
	}
	require.Contains(t, images, "kubernetes-nmstate-handler")

	var patch appsv1.Deployment
	data, err = os.ReadFile("../../manifests/cno-deployment-env.patch.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, &patch))
	require.Len(t, patch.Spec.Template.Spec.Containers, 1)
	env := map[string]string{}
	for _, e := range patch.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, images["kubernetes-nmstate-handler"], env[EnvHandlerImage])
}

// The Network CRD comes in one variant per feature set, as openshift/api
// ships it: spec.kubernetesNMState is behind the KubernetesNMState feature
// gate, so it is in the variants where that gate is on and nowhere else.
func TestNetworkCRDVariants(t *testing.T) {
	withField := map[string]bool{"TechPreviewNoUpgrade": true, "DevPreviewNoUpgrade": true, "CustomNoUpgrade": true,
		"Default": false, "OKD": false}
	files, err := filepath.Glob("../../manifests/0000_70_network_01_networks-*.crd.yaml")
	require.NoError(t, err)
	require.Len(t, files, len(withField))
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.Unmarshal(data, &crd), f)
		set := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "0000_70_network_01_networks-"), ".crd.yaml")
		assert.Equal(t, set, crd.Annotations["release.openshift.io/feature-set"], f)
		want, known := withField[set]
		require.True(t, known, "unexpected feature set %s", set)
		if !want {
			for _, v := range crd.Spec.Versions {
				assert.NotContains(t, v.Schema.OpenAPIV3Schema.Properties["spec"].Properties, "kubernetesNMState", f)
			}
			continue
		}
		for _, v := range crd.Spec.Versions {
			field, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["kubernetesNMState"]
			require.True(t, ok, "%s %s has no spec.kubernetesNMState", f, v.Name)
			var modes []string
			for _, e := range field.Properties["mode"].Enum {
				modes = append(modes, strings.Trim(string(e.Raw), `"`))
			}
			assert.Equal(t, []string{string(ModeEnabled), string(ModeDisabled)}, modes, f)
			assert.Contains(t, field.Properties, "handlerPlacement", f)
		}
	}
}
