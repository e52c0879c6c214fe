package diag

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// benchOrigin carries a monotonic reading, as the relay's clock does.
var benchOrigin = time.Now()

var (
	sinkVerdict Verdict
	sinkAllowed bool
	sinkGate    *Gate
	sinkReport  Report
)

// benchReports returns n distinct reports of equal length that differ only
// near the end, so telling them apart costs a full comparison: the hard case
// for the duplicate check. Each has its own copy of its text, as reports
// from Parse do.
func benchReports(prefix string, n int) []Report {
	rs := make([]Report, n)
	for i := range rs {
		rs[i] = Report{Warning, fmt.Sprintf("lint: 12 problems in internal/relay/deliver.go, see report %s%04d", prefix, i), "golangci-lint"}
	}
	return rs
}

// fill delivers rs one per 2 s, never touching the window, and returns the
// time of the last delivery.
func fill(b *testing.B, g *Gate, rs []Report) time.Time {
	now := benchOrigin
	for i, r := range rs {
		now = benchOrigin.Add(time.Duration(i) * Window / MaxPerWindow)
		if v := g.Admit(r, now); v != Delivered {
			b.Fatalf("fill: %v", v)
		}
	}
	return now
}

// The drop path: a child flooding one report, delivered once, then
// duplicates. It matches the last of 5 delivered reports.
func BenchmarkGateDropDuplicate(b *testing.B) {
	g := NewGate()
	delivered := benchReports("d", MaxPerWindow)
	start := fill(b, g, delivered)
	dup := delivered[len(delivered)-1]
	dup.Message = strings.Clone(dup.Message) // as from Parse: equal, not the same memory
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sinkVerdict = g.Admit(dup, start.Add(time.Duration(i)))
	}
	b.StopTimer()
	if c := g.Counts(); c.Duplicate != uint64(b.N) {
		b.Fatalf("counts %+v after %d duplicates", c, b.N)
	}
}

// The drop path: distinct reports while the window is full.
func BenchmarkGateDropRate(b *testing.B) {
	g := NewGate()
	for _, r := range benchReports("d", MaxPerWindow) {
		g.Admit(r, benchOrigin)
	}
	rs := benchReports("r", 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sinkVerdict = g.Admit(rs[i%len(rs)], benchOrigin.Add(time.Duration(i))) // stays within 10 s for b.N < 1e10
	}
	b.StopTimer()
	if c := g.Counts(); c.Rate != uint64(b.N) {
		b.Fatalf("counts %+v after %d reports", c, b.N)
	}
}

// The drop path at its longest: distinct reports after the cap, each
// compared with all 20 delivered ones.
func BenchmarkGateDropCap(b *testing.B) {
	g := NewGate()
	start := fill(b, g, benchReports("d", MaxPerGeneration))
	rs := benchReports("c", 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sinkVerdict = g.Admit(rs[i%len(rs)], start.Add(time.Duration(i)))
	}
	b.StopTimer()
	if c := g.Counts(); c.Cap != uint64(b.N) {
		b.Fatalf("counts %+v after %d reports", c, b.N)
	}
}

// What the drop path is compared with: x/time/rate refusing, in the same
// run, with the same clock arithmetic per call.
func BenchmarkRateLimiterAllowN(b *testing.B) {
	lim := rate.NewLimiter(rate.Every(Window/MaxPerWindow), MaxPerWindow)
	lim.AllowN(benchOrigin, MaxPerWindow)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sinkAllowed = lim.AllowN(benchOrigin.Add(time.Duration(i)), 1)
	}
}

// The delivered path: 20 deliveries per Gate, one per 2 s; the Gate is
// reset in place after each 20 (a reopened runtime would get a new one).
func BenchmarkGateDelivered(b *testing.B) {
	rs := benchReports("d", MaxPerGeneration)
	var g Gate
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := i % MaxPerGeneration
		if k == 0 {
			g = Gate{}
		}
		sinkVerdict = g.Admit(rs[k], benchOrigin.Add(time.Duration(k)*Window/MaxPerWindow))
	}
}

// BenchmarkGateMemory measures a Gate's memory beyond its reports' text: each
// op makes a Gate and delivers it the 20 reports it can hold, whose text is
// shared with the caller, so B/op is what one runtime's Gate costs.
func BenchmarkGateMemory(b *testing.B) {
	rs := benchReports("d", MaxPerGeneration)
	b.ReportAllocs()
	for range b.N {
		g := NewGate()
		for k, r := range rs {
			g.Admit(r, benchOrigin.Add(time.Duration(k)*Window/MaxPerWindow))
		}
		sinkGate = g
	}
}

// Parse of a typical JSON-bridge payload, for scale: the sanitizer's work
// dominates, and it runs before the Gate.
func BenchmarkParse(b *testing.B) {
	payload := testutil.LintReport()
	b.ReportAllocs()
	for range b.N {
		sinkReport, _ = Parse(payload)
	}
}
