//go:build tools

// Package tools pins controller-gen and the kubernetes-nmstate API it
// generates the nmstate.io CRDs from. It is a module of its own so that
// neither reaches the library's go.mod: controller-tools needs a newer
// Kubernetes than CNO has, and the nmstate API module newer golang.org/x
// modules; a library must ask its consumer for nothing newer than it has.
package tools

import (
	_ "github.com/nmstate/kubernetes-nmstate/api/v1"
	_ "github.com/nmstate/kubernetes-nmstate/api/v1beta1"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
