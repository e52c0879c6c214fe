package busprobe

import (
	"testing"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
)

// BenchmarkProbe is a full round trip: Probe emits, Answer replies, Probe
// judges the reply against a minimum.
func BenchmarkProbe(b *testing.B) {
	b.Run("hosted", func(b *testing.B) {
		bb := bus.New()
		Answer(bb, capability.DiagnosticProbeTopic)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Probe(bb, capability.DiagnosticProbeTopic, capability.DiagnosticSince); !ok {
				b.Fatal("not hosted")
			}
		}
	})
	b.Run("no-host", func(b *testing.B) {
		bb := bus.New()
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Probe(bb, capability.DiagnosticProbeTopic, capability.DiagnosticSince); ok {
				b.Fatal("hosted")
			}
		}
	})
}

// BenchmarkReport is Report to a host with one diagnostic listener.
func BenchmarkReport(b *testing.B) {
	bb := bus.New()
	Answer(bb, capability.DiagnosticProbeTopic)
	bb.On(diag.Topic, func(any) {})
	b.ReportAllocs()
	for b.Loop() {
		Report(bb, diag.Warning, "config file missing", "lint")
	}
}
