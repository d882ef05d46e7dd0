package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRenderedRulesParse feeds what `render` prints to bin/promrules
// (hack/promrules, built by `make tools`), which checks every PrometheusRule
// with Prometheus' own rule-file parser; then the same output with one
// expression broken, which it must refuse. The checker is a binary of its
// own module so that github.com/prometheus/prometheus stays out of go.mod.
func TestRenderedRulesParse(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = "../../bin"
	}
	checker := filepath.Join(assets, "promrules")
	require.FileExists(t, checker, "run `make tools` first")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render", "--handler-image", "img:1"}, &stdout, &stderr), stderr.String())
	rendered := stdout.String()

	check := func(manifests string) (string, error) {
		path := filepath.Join(t.TempDir(), "rendered.yaml")
		require.NoError(t, os.WriteFile(path, []byte(manifests), 0o600))
		out, err := exec.Command(checker, path).CombinedOutput()
		return string(out), err
	}

	out, err := check(rendered)
	require.NoError(t, err, out)
	assert.Equal(t, "5 rules valid\n", out, "three recording rules and two alerts")

	const expr = "sum by (type) (kubernetes_nmstate_network_interfaces)"
	require.True(t, strings.Contains(rendered, expr), "the rendered rules have no %q", expr)
	out, err = check(strings.Replace(rendered, expr, strings.TrimSuffix(expr, ")"), 1))
	require.Error(t, err, "an unclosed parenthesis must be refused")
	assert.Contains(t, out, `"cluster:kubernetes_nmstate_network_interfaces:sum": could not parse expression`)
	assert.Contains(t, out, "unclosed left parenthesis")
}
