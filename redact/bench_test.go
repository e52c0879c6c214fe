package redact

import (
	"runtime"
	"testing"

	"github.com/diagrelay/diagrelay/sanitize"
)

// The clean 1000-unit message: sanitize.Message alone, then with
// redaction (redact.Message). Run side by side:
//
//	go test -run '^$' -bench 'CleanMessage' -count 10 ./redact
func BenchmarkCleanMessage(b *testing.B) { benchMessage(b, cleanMessage()) }

// The same for a clean message of log lines, whose hashes and paths are
// long runs (logMessage):
//
//	go test -run '^$' -bench 'LogMessage' -count 10 ./redact
func BenchmarkLogMessage(b *testing.B) { benchMessage(b, logMessage()) }

func benchMessage(b *testing.B, msg string) {
	book() // compile outside the timing
	b.Run("sanitize", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			sanitize.Message(msg)
		}
	})
	b.Run("redact", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			Message(msg)
		}
	})
}

// Building the book, as a process's first report does: from the generated
// analysis (what book() does), beside deriving it from the regexes (what
// it did before analysis_table.go), and then a first report of a log line
// (the anchors and regexes it reaches built). live-MiB is the heap the
// book and that report keep.
//
//	go test -run '^$' -bench 'Book' -benchmem -count 6 ./redact
func BenchmarkBook(b *testing.B) {
	line := "2026-12-02T04:01:17Z INFO build-api fetched token for user from /var/lib/x (took 12ms)"
	for _, c := range []struct {
		name   string
		table  []ruleAnalysis
		report bool
	}{{"table", analysisTable[:], false}, {"analyzed", nil, false}, {"table+first-report", analysisTable[:], true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			build := func() *ruleBook {
				bk := compile(allSpecs(), gitleaksGlobal, c.table)
				if c.report {
					bk.redact(line)
				}
				return bk
			}
			for b.Loop() {
				build()
			}
			b.StopTimer()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			bk := build()
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(bk)
			live := after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
			b.ReportMetric(float64(live)/(1<<20), "live-MiB")
		})
	}
}
