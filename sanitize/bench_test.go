package sanitize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// mixedInput returns about n bytes of terminal output: ASCII words, SGR
// codes and multi-byte UTF-8 words. testdata/bench builds the same input.
func mixedInput(n int) string {
	words := []string{"the", "build", "failed", "at", "step", "lint", "warning:", "unused", "variable", "x", "in", "main.go:42"}
	utf := []string{"café", "naïve", "日本語", "Привет", "😀", "👍🏽", "שלום", "مرحبا", "Ελληνικά", "über", "✓", "—"}
	sgr := []string{"\x1b[1m", "\x1b[31m", "\x1b[0m", "\x1b[38;5;208m", "\x1b[4;32m"}
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 6:
			b.WriteString(words[rng.IntN(len(words))])
		case k < 8:
			b.WriteString(utf[rng.IntN(len(utf))])
		default:
			b.WriteString(sgr[rng.IntN(len(sgr))])
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString("\x1b[0m")
		}
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// asciiInput returns n bytes of printable ASCII prose with single spaces.
func asciiInput(n int) string {
	s := strings.Repeat("The quick brown fox jumps over the lazy dog; 0123456789 (ok)! ", n/60+1)
	return strings.TrimSpace(s[:n-1]) + "."
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
	in := Clean(mixedInput(mib), 0)
	benchClean(b, in, 0)
}

// 1 MiB of mixed terminal output, no limit.
func BenchmarkCleanMixed(b *testing.B) { benchClean(b, mixedInput(mib), 0) }

// Message on 1 MiB: the work is bounded by the limit, not the input size.
// (SetBytes counts the whole input, so MB/s is not meaningful here.)
func BenchmarkMessage1MiB(b *testing.B) {
	in := mixedInput(mib)
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
