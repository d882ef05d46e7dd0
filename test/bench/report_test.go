package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

var figure = regexp.MustCompile(`-?[0-9][0-9.,]*`)

// The doc's generated section is what a default run of -write-doc writes,
// but for its figures: every row and line is there, none was added or
// edited by hand. The figures themselves vary from run to run; make bench
// rewrites them.
func TestDocSectionIsGenerated(t *testing.T) {
	doc, err := os.ReadFile(budgetDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, after, err := splitDoc(doc)
	if err != nil {
		t.Fatalf("%s: %v", budgetDoc, err)
	}
	section := sample(t).docSection()
	if i := strings.Index(section, "%!"); i >= 0 {
		t.Fatalf("docSection has a bad format verb: %s", section[i:min(len(section), i+40)])
	}
	got := strings.Split(figure.ReplaceAllString(string(doc[len(before):len(doc)-len(after)]), "#"), "\n")
	want := strings.Split(figure.ReplaceAllString(section, "#"), "\n")
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("%s's generated section, line %d (figures as #), is\n  %s\nwhere make bench writes\n  %s\nrun make bench, or change test/bench/report.go rather than the doc", budgetDoc, i+1, g, w)
		}
	}
}

func TestWriteDocReplacesOnlyItsSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "# before\n" + docBegin + "\nold figures\n" + docEnd + "\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeDoc(path, docBegin+"\nnew figures\n"+docEnd+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# before\n" + docBegin + "\nnew figures\n" + docEnd + "\nafter\n"; string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriteDocNeedsBothMarkers(t *testing.T) {
	for name, doc := range map[string]string{
		"none":      "# doc\n",
		"no end":    docBegin + "\n",
		"reversed":  docEnd + "\n" + docBegin + "\n",
		"two begin": docBegin + "\n" + docBegin + "\n" + docEnd + "\n",
	} {
		if _, _, err := splitDoc([]byte(doc)); err == nil {
			t.Errorf("%s: splitDoc accepted %q", name, doc)
		}
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
