//go:build tools

// Package tools pins prometheus-operator's monitoring API, from which
// controller-gen generates the ServiceMonitor and PrometheusRule CRDs that
// the embedded control plane installs (OpenShift's cluster-monitoring
// operator installs them on a real cluster). It is a module of its own so
// that its Kubernetes version reaches neither the library's go.mod nor
// hack/tools/codegen, where a newer k8s.io/api could change the nmstate
// CRDs generated there.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)
