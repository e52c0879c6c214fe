package relay_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/redact"
	"github.com/diagrelay/diagrelay/relay"
)

// A flooding child: the same report, emitted through its bus, dropped as a
// duplicate by the gate.
func BenchmarkFloodDuplicate(b *testing.B) {
	r := newRig(b, relay.ModeRPC)
	bus := r.open(b, "/root/x", "", "").Bus()
	p := report("warning", "eslint not found on PATH", "lint")
	bus.Emit(diag.Topic, p)
	b.ReportAllocs()
	for b.Loop() {
		bus.Emit(diag.Topic, p)
	}
}

// A flooding child of distinct reports over the window: dropped as rate.
func BenchmarkFloodDistinct(b *testing.B) {
	r := newRig(b, relay.ModeRPC)
	bus := r.open(b, "/root/x", "", "").Bus()
	ps := make([]any, 64) // boxed once, as a bus payload is
	for i := range ps {
		ps[i] = diag.Report{Level: diag.Info, Message: fmt.Sprintf("distinct report number %d", i), Source: "noisy"}
	}
	for i := range 5 {
		bus.Emit(diag.Topic, diag.Report{Level: diag.Info, Message: fmt.Sprint("fill ", i)})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		bus.Emit(diag.Topic, ps[i&63])
		i++
	}
}

// An admitted report through all three sinks with the in-memory mailbox.
// Each iteration uses a fresh generation's gate (Reopen every 20) and moves
// the clock so the window admits it.
func BenchmarkAdmitted(b *testing.B) {
	r := newRig(b, relay.ModeRPC, func(c *relay.Config) { c.NotifyRate = 1e9; c.NotifyBurst = 1 << 30 })
	rt := r.open(b, "/root/x", "", "")
	msgs := make([]map[string]any, relay.MaxStatusDiagnostics)
	for i := range msgs {
		msgs[i] = report("warning", fmt.Sprintf("eslint not found on PATH (%d)", i), "lint")
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == diag.MaxPerGeneration {
			b.StopTimer()
			rt, _ = rt.Reopen()
			i = 0
			b.StartTimer()
		}
		rt.Bus().Emit(diag.Topic, msgs[i])
		r.clock.Advance(2 * time.Second)
		i++
	}
}

// The memory of an idle open runtime: 10,000 of them, measured with
// runtime.MemStats, reported as bytes per runtime.
func BenchmarkIdleRuntimes(b *testing.B) {
	const n = 10000
	for b.Loop() {
		m := relay.NewManager(relay.Config{Mailbox: mailbox.NewMemory()})
		paths := make([]string, n)
		for i := range paths {
			paths[i] = fmt.Sprintf("/root/c%05d", i)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rts := make([]*relay.Runtime, n)
		for i := range rts {
			rts[i], _ = m.Open(paths[i], "", "")
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/runtime")
		runtime.KeepAlive(rts)
		m.Close()
	}
}

// diag.ParseWith with the cleaning the relay gives every report (sanitize,
// then redact): diag's BenchmarkParse with the secret scanner's work added,
// which is most of the cost.
func BenchmarkParseRedacted(b *testing.B) {
	payload := testutil.LintReport()
	b.ReportAllocs()
	for range b.N {
		sinkReport, _, _ = diag.ParseWith(payload, diag.ParseOptions{Clean: redact.Clean})
	}
}

var sinkReport diag.Report
