package sanitize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The speed targets of docs/sanitizer.md, each beside its anchor: Clean on
// hostile text against an NFC pass alone over the same bytes, and Clean on
// 1 MiB of Cyrillic and Greek words against 1 MiB of ASCII words of the
// same lengths in characters (compared per byte). Counted by callgrind:
// sanitize/testdata/instructions.sh.

// hostileMixInput returns about n bytes of the hostile text an attacker
// sends: Zalgo letters (8-12 marks, non-canonical order), escape
// sequences, Bidi controls and zero-width characters, words between.
func hostileMixInput(n int) string {
	marks := []rune{0x0336, 0x0301, 0x0323, 0x0300, 0x0315, 0x0327, 0x0308, 0x031B, 0x0345, 0x035C, 0x0361, 0x0489, 0x0334, 0x0302}
	junk := []string{"\x1b[31m", "\x1b[0m", "\x1b]0;title\x07", "\u202E", "\u2066", "\u200B", "\u2069", "\u202C", "\x1b[38;5;208m", "\u00AD"}
	words := []string{"build", "failed", "error:", "line", "ok"}
	rng := rand.New(rand.NewPCG(13, 13))
	var b strings.Builder
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 5:
			b.WriteByte(byte('a' + rng.IntN(26)))
			for range 8 + rng.IntN(5) {
				b.WriteRune(marks[rng.IntN(len(marks))])
			}
		case k < 8:
			b.WriteString(junk[rng.IntN(len(junk))])
		default:
			b.WriteString(words[rng.IntN(len(words))])
		}
		if rng.IntN(5) == 0 {
			b.WriteByte(' ')
		}
	}
	return trimValid(b.String(), n)
}

// zalgoInput returns about n bytes of Zalgo text alone: letters with 8-12
// marks in non-canonical order, a space after some.
func zalgoInput(n int) string {
	marks := []rune{0x0336, 0x0301, 0x0323, 0x0300, 0x0315, 0x0327, 0x0308, 0x031B, 0x0345, 0x035C, 0x0361, 0x0334, 0x0302}
	rng := rand.New(rand.NewPCG(17, 17))
	var b strings.Builder
	for b.Len() < n {
		b.WriteByte(byte('a' + rng.IntN(26)))
		for range 8 + rng.IntN(5) {
			b.WriteRune(marks[rng.IntN(len(marks))])
		}
		if rng.IntN(4) == 0 {
			b.WriteByte(' ')
		}
	}
	return trimValid(b.String(), n)
}

// benchNFC times an NFC pass alone over in, into a buffer reused between
// calls, as Clean reuses its own.
func benchNFC(b *testing.B, in string) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	buf := make([]byte, 0, 2*len(in))
	for b.Loop() {
		buf = norm.NFC.AppendString(buf[:0], in)
	}
}

// Hostile text with escapes and Bidi controls: Clean against NFC alone.
func BenchmarkHostileMixClean(b *testing.B) {
	in := hostileMixInput(mib)
	Clean(in, 0)
	benchClean(b, in, 0)
}

func BenchmarkHostileMixNFC(b *testing.B) { benchNFC(b, hostileMixInput(mib)) }

// Zalgo text alone: Clean against NFC alone.
func BenchmarkZalgoClean(b *testing.B) {
	in := zalgoInput(mib)
	Clean(in, 0)
	benchClean(b, in, 0)
}

func BenchmarkZalgoNFC(b *testing.B) { benchNFC(b, zalgoInput(mib)) }

// Clean on about 1 Mi characters of words of 8-20 ASCII letters, no
// limit: the anchor of CleanWordsCyrGreek, per byte.
func BenchmarkCleanWordsASCII(b *testing.B) {
	in := wordsInput(mib, asciiLetters)
	Clean(in, 0)
	benchClean(b, in, 0)
}

// The same lengths in Cyrillic and Greek letters (2 bytes each).
func BenchmarkCleanWordsCyrGreek(b *testing.B) {
	in := wordsInput(mib, cyrGreekLetters)
	Clean(in, 0)
	benchClean(b, in, 0)
}

// TestSpeedInputs checks that the inputs of the speed targets are what
// docs/sanitizer.md says, and logs their sizes (go test -v), which turn
// the instruction counts of testdata/instructions.sh into counts a byte.
func TestSpeedInputs(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
	}{
		{"hostile", hostileInput(mib)}, {"hostile mix", hostileMixInput(mib)}, {"Zalgo", zalgoInput(mib)},
		{"ASCII words", wordsInput(mib, asciiLetters)}, {"Cyrillic/Greek words", wordsInput(mib, cyrGreekLetters)},
	} {
		if !utf8.ValidString(c.in) || len(c.in) < mib-64 {
			t.Errorf("%s: %d bytes, valid %v", c.name, len(c.in), utf8.ValidString(c.in))
		}
		t.Logf("%s: %d bytes", c.name, len(c.in))
	}
}
