package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// rule wraps one rule in a PrometheusRule manifest, after another object
// that must be skipped.
func rule(body string) string {
	return `apiVersion: v1
kind: Service
metadata:
  name: not-a-rule
spec:
  groups: this would not parse as rules
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: test
spec:
  groups:
  - name: test.rules
    rules:
` + body
}

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		name     string
		manifest string
		code     int
		output   string // in stdout on success, in stderr otherwise
	}{
		{"recording rule", rule(`    - record: cluster:x:sum
      expr: sum by (name) (x)
`), 0, "1 rules valid"},
		{"alert with templates", rule(`    - alert: XDown
      expr: sum by (namespace) (x{status="Degraded"}) > 0
      for: 15m
      labels:
        severity: warning
      annotations:
        summary: '{{ $value }} down on {{ $labels.node }}'
`), 0, "1 rules valid"},
		{"unclosed parenthesis", rule(`    - record: cluster:x:sum
      expr: sum by (name) (x
`), 1, "unclosed left parenthesis"},
		{"unknown function", rule(`    - record: cluster:x:sum
      expr: summ(x)
`), 1, `unknown function with name "summ"`},
		{"vector matching on a label twice", rule(`    - alert: X
      expr: a * on (node) group_left (node) b
`), 1, "label \"node\" must not occur in ON and GROUP clause at once"},
		{"bad duration", rule(`    - alert: X
      expr: up == 0
      for: 10 minutes
`), 1, `unknown unit " minutes"`},
		{"bad annotation template", rule(`    - alert: X
      expr: up == 0
      annotations:
        summary: '{{ $labels.node '
`), 1, `annotation "summary"`},
		{"invalid record name", rule(`    - record: 'cluster x'
      expr: up
`), 1, "invalid recording rule name"},
		{"unknown field", rule(`    - alert: X
      expr: up == 0
      severity: warning
`), 1, "field severity not found"},
		{"no rules", "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n", 1, "no PrometheusRule rules found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"-"}, strings.NewReader(tt.manifest), &stdout, &stderr)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			if tt.code == 0 {
				assert.Contains(t, stdout.String(), tt.output)
			} else {
				assert.Contains(t, stderr.String(), tt.output)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(nil, strings.NewReader(""), &stdout, &stderr))
	assert.Equal(t, 2, run([]string{"/nonexistent/rules.yaml"}, strings.NewReader(""), &stdout, &stderr))
	assert.Contains(t, stderr.String(), "/nonexistent/rules.yaml")
}
