package filter

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testtext"
	"github.com/diagrelay/diagrelay/redact"
)

// The filter on 8 MiB of log text, sanitizing only and with --redact, side
// by side in one run:
//
//	go test -run '^$' -bench Filter -count 6 ./internal/filter
func BenchmarkFilter(b *testing.B) {
	for _, c := range []struct {
		name  string
		every int
	}{{"clean", 0}, {"secret-per-4KiB", 4 << 10}} {
		in := testtext.Log(8<<20, c.every)
		redact.Text("") // compile the rules outside the timing
		for _, f := range []struct {
			name string
			run  func(io.Reader, io.Writer, int, byte) error
		}{{"sanitize", Records}, {"redact", RedactedRecords}} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					if err := f.run(bytes.NewReader(in), io.Discard, 1000, '\n'); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The corpus is clean where it should be, and has its secrets.
func TestLogText(t *testing.T) {
	for _, c := range []struct {
		every int
		want  bool
	}{{0, false}, {4 << 10, true}} {
		var out bytes.Buffer
		if err := RedactedRecords(bytes.NewReader(testtext.Log(256<<10, c.every)), &out, 1000, '\n'); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(out.String(), "[REDACTED:")
		if c.want != (n > 0) || c.want && n < (256<<10)/(4<<10)-1 {
			t.Errorf("secret every %d: %d redacted", c.every, n)
		}
	}
}
