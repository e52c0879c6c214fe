package sanitize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/diagrelay/diagrelay/internal/testtext"
)

// asciiInput returns n bytes of printable ASCII prose with single spaces.
func asciiInput(n int) string {
	s := strings.Repeat("The quick brown fox jumps over the lazy dog; 0123456789 (ok)! ", n/60+1)
	return strings.TrimSpace(s[:n-1]) + "."
}

// hostileInput returns about n bytes of text built to be expensive: Zalgo
// letters with 8-12 combining marks each in non-canonical order (so NFC
// must reorder them), decomposed accents that NFC composes, and Hangul
// jamo that NFC composes into syllables.
func hostileInput(n int) string {
	marks := []rune{0x0336, 0x0301, 0x0323, 0x0300, 0x0315, 0x0327, 0x0308, 0x031B, 0x0345, 0x035C, 0x0361, 0x0489, 0x0334, 0x0302}
	rng := rand.New(rand.NewPCG(11, 11))
	var b strings.Builder
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 6: // Zalgo: a letter and 8-12 marks, high classes first
			b.WriteByte(byte('a' + rng.IntN(26)))
			for range 8 + rng.IntN(5) {
				b.WriteRune(marks[rng.IntN(len(marks))])
			}
		case k < 8: // decomposed accents
			b.WriteString([]string{"e\u0301", "a\u0300", "o\u0308", "u\u0323\u0302", "c\u0327", "n\u0303"}[rng.IntN(6)])
		default: // conjoining jamo: L V (T)
			b.WriteRune(0x1100 + rune(rng.IntN(19)))
			b.WriteRune(0x1161 + rune(rng.IntN(21)))
			if rng.IntN(2) == 0 {
				b.WriteRune(0x11A8 + rune(rng.IntN(27)))
			}
		}
		if rng.IntN(6) == 0 {
			b.WriteByte(' ')
		}
	}
	s := b.String()
	for !utf8.ValidString(s[:n]) {
		n--
	}
	return s[:n]
}

// longWordsInput returns about n bytes of long words in non-ASCII scripts,
// single spaces between them.
func longWordsInput(n int) string {
	words := []string{"Государственный", "αντιπροσωπευτικός", "ничегонеделание", "προσφορότερος", "Donaudampfschifffahrtsgesellschaftskapitän", "достопримечательность"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	s := b.String()[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s)
}

const mib = 1 << 20

func benchClean(b *testing.B, in string, limit int) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		Clean(in, limit)
	}
}

// Printable ASCII, no limit: the fast path (target >= 1 GB/s).
func BenchmarkCleanASCII(b *testing.B) { benchClean(b, asciiInput(mib), 0) }

// Already clean, mixed scripts and emoji: Clean returns its input (0 allocs).
func BenchmarkCleanAlreadyClean(b *testing.B) {
	in := Clean(testtext.Terminal(mib), 0)
	benchClean(b, in, 0)
}

// 1 MiB of mixed terminal output, no limit.
func BenchmarkCleanMixed(b *testing.B) { benchClean(b, testtext.Terminal(mib), 0) }

// Message on 1 MiB: the work is bounded by the limit, not the input size.
// (SetBytes counts the whole input, so MB/s is not meaningful here.)
func BenchmarkMessage1MiB(b *testing.B) {
	in := testtext.Terminal(mib)
	b.ReportAllocs()
	for b.Loop() {
		Message(in)
	}
}

// Message on 1 MiB of ASCII.
func BenchmarkMessage1MiBASCII(b *testing.B) {
	in := asciiInput(mib)
	b.ReportAllocs()
	for b.Loop() {
		Message(in)
	}
}

// A typical short report.
func BenchmarkMessageShort(b *testing.B) {
	in := "\x1b[33mwarning\x1b[0m: unused import \"fmt\" in main.go:3 — ✓ fixed\n"
	benchClean(b, in, MessageLimit)
}

// Hostile, NFC-heavy input: Clean against the NFC pass alone, in one run.
// One Clean before the timing builds what Clean builds once per process
// (tables made on first use), so that few iterations do not spread that
// one-time cost over each call: what is timed is the steady state, as
// BenchmarkHostileNFC's is.
func BenchmarkHostileClean(b *testing.B) {
	in := hostileInput(mib)
	Clean(in, 0)
	benchClean(b, in, 0)
}

func BenchmarkHostileNFC(b *testing.B) {
	in := hostileInput(mib)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		norm.NFC.String(in)
	}
}

// Message on 1 MiB of long non-ASCII words, against Message1MiBASCII.
func BenchmarkMessage1MiBLongWords(b *testing.B) {
	in := longWordsInput(mib)
	b.ReportAllocs()
	for b.Loop() {
		Message(in)
	}
}

// copy of the printable ASCII input, against BenchmarkCleanASCII.
func BenchmarkCopyASCII(b *testing.B) {
	in := asciiInput(mib)
	dst := make([]byte, len(in))
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		copy(dst, in)
	}
}
