package testtext

import (
	"math/rand/v2"
	"strings"
)

// Terminal returns n bytes of terminal output: ASCII words, SGR codes
// and multi-byte UTF-8 words.
func Terminal(n int) string {
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
