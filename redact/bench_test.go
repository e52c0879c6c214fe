package redact

import (
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
