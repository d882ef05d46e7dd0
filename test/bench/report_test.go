package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cno-nmstate/cno-nmstate/internal/docsection"
)

const budgetDoc = "../../docs/resource-budget.md"

// sample has every figure set, at the default sizes, so that no ratio is
// NaN and each row appears as a default run writes it.
func sample(t *testing.T) results {
	t.Helper()
	sizes, err := parseSizes("-nodes", defaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	rolloutSizes, err := parseSizes("-rollout-nodes", defaultRolloutSizes)
	if err != nil {
		t.Fatal(err)
	}
	one := hostMemory{rssMB: 1, heapMB: 1}
	r := results{took: time.Minute, machine: machine{cores: 1, memGiB: 1}, nnsKB: defaultNNSKB, settle: defaultSettle,
		idle: 1, idleBaseline: 1, rvChanges: 1, rvChangesBaseline: 1,
		convergeP50: time.Second, convergeP95: time.Second, reflectP50: time.Second, reflectP95: time.Second,
		render:    testing.BenchmarkResult{N: 1, T: time.Millisecond, MemAllocs: 1},
		renderDir: testing.BenchmarkResult{N: 1, T: time.Millisecond, MemAllocs: 1}}
	for _, n := range sizes {
		r.memory = append(r.memory, memorySample{nodes: n, requests: 1, scoped: one, unscoped: one})
	}
	for _, n := range rolloutSizes {
		r.rollouts = append(r.rollouts, rolloutResult{nodes: n, host: time.Second, kubectl: time.Second, hostHeapMB: 1, hostHeapIdleMB: 1})
	}
	return r
}

// The doc's generated section is what a default run of -write-doc writes,
// but for its figures: every row and line is there, none was added or
// edited by hand. The figures themselves vary from run to run; make bench
// rewrites them.
func TestDocSectionIsGenerated(t *testing.T) {
	doc, err := os.ReadFile(budgetDoc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := budgetSection.Section(doc)
	if err != nil {
		t.Fatalf("%s: %v", budgetDoc, err)
	}
	section := sample(t).docSection()
	if i := strings.Index(section, "%!"); i >= 0 {
		t.Fatalf("docSection has a bad format verb: %s", section[i:min(len(section), i+40)])
	}
	if diff := docsection.SameButFigures(got, section); diff != "" {
		t.Fatalf("%s's generated section: %s\nrun make bench, or change test/bench/report.go rather than the doc", budgetDoc, diff)
	}
}

// The render figures are BenchmarkRender's two results as go test prints them.
func TestParseRenderBench(t *testing.T) {
	out := `goos: linux
BenchmarkRender/Render-2         	     100	  13071237 ns/op	 3465406 B/op	   31472 allocs/op
BenchmarkRender/RenderDir-2      	     152	  11223519 ns/op	 3442539 B/op	   31270 allocs/op
PASS`
	plugin, cno, err := parseRenderBench(out)
	require.NoError(t, err)
	assert.Equal(t, int64(13071237), plugin.NsPerOp())
	assert.Equal(t, int64(31472), plugin.AllocsPerOp())
	assert.Equal(t, int64(3465406), plugin.AllocedBytesPerOp())
	assert.Equal(t, int64(11223519), cno.NsPerOp())
	assert.Equal(t, int64(31270), cno.AllocsPerOp())

	_, _, err = parseRenderBench("PASS")
	assert.ErrorContains(t, err, "no Render and RenderDir results")
}
