package redact

import (
	"testing"

	"github.com/diagrelay/diagrelay/sanitize"
)

// The clean 1000-unit message: sanitize.Message alone, then with
// redaction (redact.Message). Run side by side:
//
//	go test -run '^$' -bench 'CleanMessage' -count 10 ./redact
func BenchmarkCleanMessage(b *testing.B) {
	msg := cleanMessage()
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
