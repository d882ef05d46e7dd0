package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func TestRenderCommand(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       string
		code      int
		stderrHas []string
		objects   bool
	}{
		{name: "single node bare metal", args: []string{"render", "--platform", "BareMetal", "--topology", "SingleReplica", "--handler-image", "img:1"},
			stderrHas: []string{"reason=PlatformDefault", "rendered"}, objects: true},
		{name: "image from the environment", args: []string{"render"}, env: "img:env",
			stderrHas: []string{"reason=PlatformDefault"}, objects: true},
		{name: "AWS renders nothing", args: []string{"render", "--platform", "AWS", "--handler-image", "img:1"},
			stderrHas: []string{"reason=PlatformNotDefault", `"mode":"Enabled"`}},
		{name: "AWS opt-in", args: []string{"render", "--platform", "AWS", "--mode", "Enabled", "--handler-image", "img:1"},
			stderrHas: []string{"reason=UserEnabled"}, objects: true},
		{name: "no image names the flag and the variable", args: []string{"render"}, code: 2,
			stderrHas: []string{"-handler-image", "$KUBERNETES_NMSTATE_HANDLER_IMAGE"}},
		{name: "hosted control plane", args: []string{"render", "--platform", "AWS", "--control-plane-topology", "External", "--mode", "Enabled", "--handler-image", "img:1"},
			stderrHas: []string{"reason=UserEnabled", "control plane topology External"}, objects: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(nmstate.EnvHandlerImage, tt.env)
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			assert.Equal(t, tt.code, code, stderr.String())
			for _, s := range tt.stderrHas {
				assert.Contains(t, stderr.String(), s)
			}
			if !tt.objects {
				assert.Empty(t, stdout.String())
				return
			}
			dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stdout.String()), 4096)
			kinds := map[string]bool{}
			for {
				var u unstructured.Unstructured
				if err := dec.Decode(&u.Object); err != nil {
					break
				}
				if u.Object == nil {
					continue
				}
				kinds[u.GetKind()] = true
				if u.GetKind() == "DaemonSet" {
					image, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
					require.Len(t, image, 1)
					assert.NotEmpty(t, image[0].(map[string]any)["image"])
				}
			}
			for _, k := range []string{"Namespace", "CustomResourceDefinition", "DaemonSet", "Deployment", "MutatingWebhookConfiguration"} {
				assert.True(t, kinds[k], "no %s in the output", k)
			}
		})
	}
}
