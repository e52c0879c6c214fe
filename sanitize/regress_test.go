package sanitize

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/internal/testtext"
)

// Reproductions of the ways the first edition lost to an attacker. Each
// test is named after what was found.

// keepingSink keeps every string it is handed, the way a sink that stores
// records does; bytes passed to Write are copied, as io.Writer allows.
type keepingSink struct {
	pieces []string
	cur    strings.Builder
}

func (k *keepingSink) Write(p []byte) (int, error) {
	k.pieces = append(k.pieces, string(p))
	return len(p), nil
}

func (k *keepingSink) WriteString(s string) (int, error) {
	k.pieces = append(k.pieces, s)
	return len(s), nil
}

// record ends a record: it returns the pieces kept since the last one.
func (k *keepingSink) record() []string {
	p := k.pieces
	k.pieces = nil
	return p
}

// The Writer handed its destination strings that pointed into its buffer,
// and the next text overwrote them.
func TestWriterStringsOverwritten(t *testing.T) {
	texts := []string{"safe text", "\x1b[31mEVIL\u00e9 with more text", "abc", "a\u20ac",
		strings.Repeat("long \u00e9 text ", 300), "e\u0301 and more", "\xe2\x82", "last"}
	for _, limit := range []int{0, MessageLimit, 5, math.MaxInt} {
		sink := &keepingSink{}
		w := NewWriter(sink, limit)
		var kept [][]string // every piece of every record, as handed out
		for _, text := range texts {
			// In pieces, so that the Writer flushes mid-text too.
			for len(text) > 0 {
				n := min(len(text), 7)
				if _, err := w.Write([]byte(text[:n])); err != nil {
					t.Fatal(err)
				}
				text = text[n:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			kept = append(kept, sink.record())
		}
		// Only now, after every later text went through the Writer.
		for i, pieces := range kept {
			got := strings.Join(pieces, "")
			if want := Clean(texts[i], limit); got != want {
				t.Errorf("limit %d: record %d changed after it was written: got %+q, want %+q", limit, i, got, want)
			}
			for _, p := range pieces {
				if !utf8.ValidString(p) {
					t.Errorf("limit %d: record %d holds invalid UTF-8 %+q", limit, i, p)
				}
			}
		}
	}
}

// Results of Clean that share nothing with the input must not change when
// later calls run; they are their own memory.
func TestCleanResultsNeverChange(t *testing.T) {
	inputs := []string{"\x1b[31mred\x1b[0m one", "e\u0301 two", strings.Repeat("x\u200B", 100), "a\tb"}
	var got []string
	for range 3 {
		for _, in := range inputs {
			got = append(got, Clean(in, 0), Message(in), Source(in), Clean(in, 4))
		}
	}
	k := 0
	for range 3 {
		for _, in := range inputs {
			for _, want := range []string{Clean(in, 0), Message(in), Source(in), Clean(in, 4)} {
				if got[k] != want {
					t.Errorf("result %d changed: %+q, want %+q", k, got[k], want)
				}
				k++
			}
		}
	}
}

// Limits near math.MaxInt overflowed the limit arithmetic: Clean panicked
// on slice bounds or in growslice.
func TestMaxIntLimits(t *testing.T) {
	limits := []int{math.MaxInt, math.MaxInt - 1, math.MaxInt - 2, math.MaxInt - 3, math.MaxInt / 2, math.MaxInt/3 + 1,
		math.MaxInt / 3, math.MaxInt/3 - 100, math.MaxInt / 4, 1 << 40, math.MinInt, math.MinInt + 1, -1}
	inputs := []string{"hello world", "", " ", strings.Repeat("word ", 1000), "\x1b[31mred\x1b[0m e\u0301 \u00e9 😀",
		strings.Repeat("é", 5000), strings.Repeat("a\u0301\u0323", 100)}
	for _, limit := range limits {
		for _, in := range inputs {
			want := Clean(in, 0)
			if got := Clean(in, limit); got != want {
				t.Errorf("Clean(%.20q, %d) = %.20q, want %.20q", in, limit, got, want)
			}
			if s, err := streamed(in, limit, []int{len(in) / 2}); err != nil || s != want {
				t.Errorf("NewWriter(%d) on %.20q = %.20q, %v; want %.20q", limit, in, s, err, want)
			}
		}
	}
}

// FuzzCleanAnyLimit varies the limit over the whole int range: whatever
// the limit, the contract holds and Clean does not panic.
func FuzzCleanAnyLimit(f *testing.F) {
	for _, l := range []int{0, 1, 5, math.MaxInt, math.MaxInt - 1, math.MinInt, math.MaxInt / 3} {
		f.Add([]byte("hello world \x1b[1mé\u0301"), l)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		in := string(data)
		out := cleanChecked(t, in, limit)
		var buf bytes.Buffer
		w := NewWriter(&buf, limit)
		w.Write(data[:len(data)/2])
		w.Write(data[len(data)/2:])
		if err := w.Close(); err != nil || buf.String() != out {
			t.Errorf("Writer(%+q, %d) = %+q, %v; Clean = %+q", in, limit, buf.String(), err, out)
		}
	})
}

// Hostile input allocated per segment (about 23,500 times per MiB); a call
// now allocates at most 8 times whatever the input.
func TestCleanAllocationsBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops buffers at random: allocations are not Clean's own")
	}
	inputs := map[string]string{
		"hostile":    hostileInput(1 << 20),
		"mixed":      testtext.Terminal(1 << 20),
		"long words": longWordsInput(1 << 20),
		"removed":    strings.Repeat("\u200B\x1b[31m", 1<<16),
		"joiners":    strings.Repeat("👨\u200D👩 a\u200Db ب\u200Cر ", 1<<12),
		"invalid":    strings.Repeat("a\xff\xe2\x82 ", 1<<14),
		"expanding":  strings.Repeat("\u0958\u0344\U0001D15E", 1<<14),
	}
	for name, in := range inputs {
		Clean(in, 0) // builds the tables it needs
		for _, limit := range []int{0, MessageLimit} {
			if n := testing.AllocsPerRun(3, func() { Clean(in, limit) }); n > 8 {
				t.Errorf("%s, limit %d: %v allocations", name, limit, n)
			}
		}
	}
}
