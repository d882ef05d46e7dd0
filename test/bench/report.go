package main

// What the bench reports: the summary lines it ends with.

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

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
			m.nodes, m.scoped.rssMB/m.unscoped.rssMB, m.scoped.rssMB, m.unscoped.rssMB)
		line("heap_ratio_vs_default_cache_at_%d_nodes: %.2f (host %.1f MB, default cache %.1f MB)",
			m.nodes, m.scoped.heapMB/m.unscoped.heapMB, m.scoped.heapMB, m.unscoped.heapMB)
	}
	first, last := r.memory[0], r.memory[len(r.memory)-1]
	host, unscoped := r.heapGrowth()
	line("heap_growth_mb_%d_to_%d_nodes: %.1f (default cache %.1f)", first.nodes, last.nodes, host, unscoped)
	line("requests_per_idle_reconcile: %s", r.requests("%d at %d nodes", ", "))
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

// requests lists the idle reconcile's requests at each size.
func (r results) requests(format, sep string) string {
	var out []string
	for _, m := range r.memory {
		out = append(out, fmt.Sprintf(format, m.requests, m.nodes))
	}
	return strings.Join(out, sep)
}

func (r results) renderRatio() float64 {
	return float64(r.render.NsPerOp()) / float64(r.renderDir.NsPerOp())
}

func (ro rolloutResult) ratio() float64 { return ro.host.Seconds() / ro.kubectl.Seconds() }

func benchFigure(b testing.BenchmarkResult) string {
	return fmt.Sprintf("%.1f ms, %d allocs", float64(b.NsPerOp())/1e6, b.AllocsPerOp())
}

// round1 rounds to one decimal without printing "-0.0".
func round1(x float64) float64 { return math.Round(x*10)/10 + 0 }
