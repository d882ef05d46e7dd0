package devcluster

import (
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// WritePermissiveNetworkCRD writes into dir the Network.operator CRD at src
// with no schema at all for spec.kubernetesNMState
// (x-kubernetes-preserve-unknown-fields, no type): the worst an old or
// hand-edited CRD could let through, so that wrong types at every level and
// unknown fields reach the plugin as sent. It returns the file's path.
func WritePermissiveNetworkCRD(src, dir string) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("reading the Network CRD: %w", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return "", fmt.Errorf("decoding the Network CRD: %w", err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		return "", fmt.Errorf("the Network CRD %s has %d versions, want one with a schema", src, len(crd.Spec.Versions))
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	if _, ok := spec.Properties["kubernetesNMState"]; !ok {
		return "", fmt.Errorf("the Network CRD %s has no spec.kubernetesNMState", src)
	}
	spec.Properties["kubernetesNMState"] = apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true)}
	root.Properties["spec"] = spec
	out, err := yaml.Marshal(crd)
	if err != nil {
		return "", fmt.Errorf("encoding the Network CRD: %w", err)
	}
	path := filepath.Join(dir, "networks-permissive.crd.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return "", fmt.Errorf("writing the permissive Network CRD: %w", err)
	}
	return path, nil
}
