package main

// What the bench reports: the summary lines it ends with, and the section of
// docs/resource-budget.md that -write-doc replaces. Both come from one
// results value, so the doc shows exactly what a run measured.

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/cno-nmstate/cno-nmstate/internal/docsection"
)

// The generated section lies between these two lines of the doc.
const (
	docBegin = "<!-- begin: written by `make bench` (go run ./test/bench -write-doc); change test/bench/report.go, not this section -->"
	docEnd   = "<!-- end: written by `make bench` -->"
)

var budgetSection = docsection.Markers{Begin: docBegin, End: docEnd}

// results are every figure one run measured, baselines included.
type results struct {
	took                         time.Duration
	machine                      machine
	nnsKB                        int
	settle                       time.Duration
	idle, idleBaseline           int
	rvChanges, rvChangesBaseline int
	convergeP50, convergeP95     time.Duration
	reflectP50, reflectP95       time.Duration
	render, renderDir            testing.BenchmarkResult
	memory                       []memorySample
	rollouts                     []rolloutResult
}

type machine struct {
	cores  int
	memGiB float64
}

func thisMachine() (machine, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return machine{}, fmt.Errorf("reading /proc: %w", err)
	}
	mem, err := fs.Meminfo()
	if err != nil {
		return machine{}, fmt.Errorf("reading /proc/meminfo: %w", err)
	}
	if mem.MemTotalBytes == nil {
		return machine{}, fmt.Errorf("no MemTotal in /proc/meminfo")
	}
	return machine{cores: runtime.NumCPU(), memGiB: float64(*mem.MemTotalBytes) / (1 << 30)}, nil
}

// summary is the lines the bench ends with, one figure each, its baseline
// in parentheses.
func (r results) summary() string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("idle_mutating_requests: %d (baseline %d)", r.idle, r.idleBaseline)
	line("idle_resource_version_changes: %d (baseline %d)", r.rvChanges, r.rvChangesBaseline)
	for _, m := range r.memory {
		line("rss_ratio_vs_default_cache_at_%d_nodes: %.2f (host %.1f MB, default cache %.1f MB)",
			m.nodes, m.rssRatio(), m.scoped.rssMB, m.unscoped.rssMB)
		line("heap_ratio_vs_default_cache_at_%d_nodes: %.2f (host %.1f MB, default cache %.1f MB)",
			m.nodes, m.heapRatio(), m.scoped.heapMB, m.unscoped.heapMB)
	}
	first, last := r.memory[0], r.memory[len(r.memory)-1]
	host, unscoped := r.heapGrowth()
	line("heap_growth_mb_%d_to_%d_nodes: %.1f (default cache %.1f)", first.nodes, last.nodes, host, unscoped)
	var requests []string
	for _, m := range r.memory {
		requests = append(requests, fmt.Sprintf("%d at %d nodes", m.requests, m.nodes))
	}
	line("requests_per_idle_reconcile: %s", strings.Join(requests, ", "))
	line("converge_p50_ms: %d (p95 %d)", r.convergeP50.Milliseconds(), r.convergeP95.Milliseconds())
	line("status_reflect_p50_ms: %d (p95 %d)", r.reflectP50.Milliseconds(), r.reflectP95.Milliseconds())
	line("render_ratio_vs_renderdir: %.2f (Render %s; RenderDir %s)", r.renderRatio(), benchFigure(r.render), benchFigure(r.renderDir))
	for _, ro := range r.rollouts {
		line("rollout_ratio_vs_kubectl_at_%d_nodes: %.2f (host %.1fs, kubectl %.1fs)", ro.nodes, ro.ratio(), ro.host.Seconds(), ro.kubectl.Seconds())
	}
	var heaps []string
	for _, ro := range r.rollouts {
		heaps = append(heaps, fmt.Sprintf("%.1f at %d nodes", ro.hostHeapMB, ro.nodes))
	}
	line("rollout_heap_mb: %s", strings.Join(heaps, ", "))
	return b.String()
}

// heapGrowth is how much the host's heap, and the baseline's, grew from the
// smallest cluster to the largest.
func (r results) heapGrowth() (host, unscoped float64) {
	first, last := r.memory[0], r.memory[len(r.memory)-1]
	return round1(last.scoped.heapMB - first.scoped.heapMB), round1(last.unscoped.heapMB - first.unscoped.heapMB)
}

func (m memorySample) rssRatio() float64  { return m.scoped.rssMB / m.unscoped.rssMB }
func (m memorySample) heapRatio() float64 { return m.scoped.heapMB / m.unscoped.heapMB }

func (r results) renderRatio() float64 {
	return float64(r.render.NsPerOp()) / float64(r.renderDir.NsPerOp())
}

func (ro rolloutResult) ratio() float64 { return ro.host.Seconds() / ro.kubectl.Seconds() }

func benchFigure(b testing.BenchmarkResult) string {
	return fmt.Sprintf("%.1f ms, %d allocs", float64(b.NsPerOp())/1e6, b.AllocsPerOp())
}

// round1 rounds to one decimal without printing "-0.0".
func round1(x float64) float64 { return math.Round(x*10)/10 + 0 }

// docSection is the doc's generated section, markers included.
func (r results) docSection() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("%s", docBegin)
	w("One run of `go run ./test/bench`: %d min %02d s on %d cores and %.0f GiB of memory.",
		int(r.took.Minutes()), int(r.took.Seconds())%60, r.machine.cores, r.machine.memGiB)
	w("")
	w("| figure | host | baseline | goal |")
	w("| --- | --- | --- | --- |")
	w("| mutating requests in 100 idle reconciles | %d | %d (server-side apply of every object every reconcile, as CNO's apply does) | 0 |", r.idle, r.idleBaseline)
	w("| resourceVersion changes in those reconciles | %d | %d | 0 |", r.rvChanges, r.rvChangesBaseline)
	first, last := r.memory[0], r.memory[len(r.memory)-1]
	host, unscoped := r.heapGrowth()
	w("| heap growth of the host's process from %d to %d Nodes + NodeNetworkStates of %d KB | %.1f MB | %.1f MB (the same host on controller-runtime's default cache) | < 5 MB |",
		first.nodes, last.nodes, r.nnsKB, host, unscoped)
	var nodes, requests []string
	for _, m := range r.memory {
		nodes, requests = append(nodes, fmt.Sprint(m.nodes)), append(requests, fmt.Sprint(m.requests))
	}
	w("| API requests per idle reconcile, at %s nodes | %s | — | O(1) |", strings.Join(nodes, ", "), strings.Join(requests, ", "))
	w("| `mode` patch → every object applied and conditions written | p50 %d ms, p95 %d ms (the controllers start the rollout meanwhile) | — | p50 < 1 s |",
		r.convergeP50.Milliseconds(), r.convergeP95.Milliseconds())
	w("| DaemonSet status written by its controller (a Linux node enters or leaves the handler's nodeSelector) → conditions | p50 %d ms, p95 %d ms | — | — |",
		r.reflectP50.Milliseconds(), r.reflectP95.Milliseconds())
	for _, ro := range r.rollouts {
		w("| enable → every handler pod ready and `Available` True, %d kwok nodes | %.1f s | %.1f s (`kubectl apply` of the same rendered objects) | ratio ≤ 1.1: **%.2f** |",
			ro.nodes, ro.host.Seconds(), ro.kubectl.Seconds(), ro.ratio())
	}
	for _, ro := range r.rollouts {
		w("| heap of the bench's process, which runs the host in-process, after the rollout on %d kwok nodes | %.1f MB (%.1f MB before) | — | flat |",
			ro.nodes, ro.hostHeapMB, ro.hostHeapIdleMB)
	}
	w("| `Render` / CNO `render.RenderDir`, same bindata and data | %s | %s | ratio ≤ 1.5: **%.2f** |",
		benchFigure(r.render), benchFigure(r.renderDir), r.renderRatio())
	w("")
	w("Memory of the host's own process at each cluster size: the host as `cno-nmstate run` builds it")
	w("(`test/bench/hostproc`) beside the same process on controller-runtime's default cache. Each is")
	w("started afresh at that size and read %s after its first successful reconcile: RSS as the", r.settle)
	w("process has it, then the heap in use after a GC.")
	w("")
	w("| Nodes + NodeNetworkStates | RSS: host | RSS: default cache | ratio | heap: host | heap: default cache | ratio |")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, m := range r.memory {
		w("| %d | %.1f MB | %.1f MB | **%.2f** | %.1f MB | %.1f MB | **%.2f** |", m.nodes,
			m.scoped.rssMB, m.unscoped.rssMB, m.rssRatio(), m.scoped.heapMB, m.unscoped.heapMB, m.heapRatio())
	}
	w("")
	w("The summary lines it ends with:")
	w("")
	w("```")
	b.WriteString(r.summary())
	w("```")
	w("%s", docEnd)
	return b.String()
}
