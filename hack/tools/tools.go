//go:build tools

// Package tools pins the binaries the project builds for code generation and
// for its end-to-end tests, so that `go build` of each comes from the Go
// module proxy at a reviewed version and nothing is downloaded by hand.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
