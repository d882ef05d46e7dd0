//go:build tools

// Package tools pins kwok, the fake-node/fake-kubelet controller the
// end-to-end tests, the demo and the budget driver run next to the embedded
// control plane. It is a module of its own so that none of kwok's
// dependencies reach the library's or hack/tools' go.mod.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
