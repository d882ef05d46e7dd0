package nmstate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The release tooling finds the env var's value by the image-references
// pullspec: the two must agree, and the variable must be the one ParamsFromEnv reads.
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
