package main

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// networkWithMode builds the Network.operator object a user would have, so
// -mode goes through the same parsing and validation as the real field.
func networkWithMode(mode string) *unstructured.Unstructured {
	n := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": "cluster"},
	}}
	if mode != "" {
		n.Object["spec"] = map[string]any{"kubernetesNMState": map[string]any{"mode": mode}}
	}
	return n
}
