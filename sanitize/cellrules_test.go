package sanitize

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The cell rules' cases (docs/sanitizer.md): no cell past the 21
// bytes tmux keeps, emoji ZWJ sequences included; a text starts with a
// base; conjoining jamo are letters; the mark cap counts the full
// decomposition; the Khitan filler stays with Khitan.
func TestCellRules(t *testing.T) {
	chain := strings.Repeat("👨\u200D", 299) + "👨"
	runCases(t, []cleanCase{
		{name: "the family of four: three and a boy", in: "👨\u200D👩\u200D👧\u200D👦", want: "👨\u200D👩\u200D👧👦"},
		{name: "a sequence that fits stays whole", in: "👨\u200D❤\uFE0F\u200D💋", want: "👨\u200D❤\uFE0F\u200D💋"},
		{name: "a kiss: split before the element past 21 bytes", in: "👨\u200D❤\uFE0F\u200D💋\u200D👨", want: "👨\u200D❤\uFE0F\u200D💋👨"},
		{name: "a selector before a joiner that goes, kept where it holds alone", in: "👩\u200D👩\u200D🏳\uFE0F\u200D🌈", want: "👩\u200D👩\u200D🏳\uFE0F🌈"},
		{name: "marks at the start of a message", in: "\u0301\u0302\u0303build failed", limit: MessageLimit, want: "build failed"},
		{name: "marks at the start of a source", in: " \u20DD\u0489lint", limit: SourceLimit, want: "lint"},
		{name: "a joiner and a selector at the start", in: "\u200D\uFE0F\u0301x", want: "x"},
		{name: "vowel jamo at the start", in: "\u1161\u1161\u11A8가", want: "가"},
		{name: "a skin tone at the start draws its own cell", in: "🏽 ok", want: "🏽 ok"},
		{name: "so does a halfwidth sound mark", in: "\uFF9F\uFF65ok", want: "\uFF9F\uFF65ok"},
		{name: "a spacing mark at the start", in: "\u093E\u0915", want: "\u0915"},
		{name: "escapes and spaces before the marks", in: "\x1b[31m \t\u0301\u0301a", want: "a"},
		{name: "NFD Korean is Korean", in: norm.NFD.String("대한민국헌법 제일조"), want: "대한민국헌법 제일조"},
		{name: "Old Hangul keeps its jamo", in: strings.Repeat("ᄒᆞᆫ", 40), want: strings.Repeat("ᄒᆞᆫ", 40)},
		{name: "a run of vowel jamo stops at a cell", in: "ᄀ" + strings.Repeat("\u1161", 10) + "ᄂ", want: "가" + strings.Repeat("\u1161", 5) + "ᄂ"},
		{name: "jamo leave the marks of the next cluster", in: norm.NFD.String("각각각각") + "e" + strings.Repeat("\u0301", 9), want: "각각각각é" + strings.Repeat("\u0301", 7)},
		{name: "Tibetan \\u0fac counts its two marks", in: "\u0f40\u0fac" + strings.Repeat("\u0301", 7), want: "\u0f40\u0fab\u0fb7" + strings.Repeat("\u0301", 6)},
		{name: "Tibetan \\u0f4d counts its mark", in: "\u0f4d" + strings.Repeat("\u0f72", 9), want: "\u0f4c\u0fb7" + strings.Repeat("\u0f72", 5)},
		{name: "a skin tone counts one mark, in a run as one at a time", in: "x 👍🏽" + strings.Repeat("\u0301", 9), want: "x 👍🏽" + strings.Repeat("\u0301", 7)},
		{name: "the Khitan filler after Latin letters goes", in: "ab\U00016FE4\U00016FE4c", want: "abc"},
		{name: "the Khitan filler after Khitan stays, once", in: "\U00018B00\U00016FE4\U00016FE4 \U00018B05\U00016FE4", want: "\U00018B00\U00016FE4 \U00018B05\U00016FE4"},
		{name: "the Khitan filler after a space goes", in: "\U00018B00 \U00016FE4", want: "\U00018B00"},
	})
	// A chain of 300: every element kept, no cell past 21 bytes.
	out := Clean(chain, 0)
	if got := strings.Count(out, "👨"); got != 300 {
		t.Errorf("a chain of 300 keeps %d elements: %+q", got, out)
	}
	if over := overCells(out); len(over) > 0 {
		t.Errorf("cells past 21 bytes: %+q", over)
	}
	if want := strings.Repeat("👨\u200D👨\u200D👨", 100); out != want {
		t.Errorf("Clean(chain of 300) = %+q, want threes", out)
	}
}

// Jamo are letters: in a text of conjoining jamo of any length, Clean
// removes none of them (up to the cell), whatever syllables they make.
func TestJamoAreLetters(t *testing.T) {
	var ls, vs, ts []rune
	for r := rune(0x1100); r <= 0x11FF; r++ {
		switch {
		case r == 0x115F || r == 0x1160:
			// The fillers are default ignorable: removed.
		case unicode.Is(gcbL, r):
			ls = append(ls, r)
		case r < 0x11A8:
			vs = append(vs, r)
		default:
			ts = append(ts, r)
		}
	}
	var b strings.Builder
	for i := range 3000 {
		b.WriteRune(ls[i%len(ls)])
		b.WriteRune(vs[i*7%len(vs)])
		if i%3 != 0 {
			b.WriteRune(ts[i*5%len(ts)])
		}
	}
	in := b.String()
	got, want := Clean(in, 0), norm.NFC.String(in)
	if got != want {
		g, w := []rune(got), []rune(want)
		i := 0
		for i < min(len(g), len(w)) && g[i] == w[i] {
			i++
		}
		t.Errorf("Clean of 3000 syllables of jamo is not their NFC form: from rune %d, got %+q, want %+q", i, string(g[i:min(len(g), i+8)]), string(w[i:min(len(w), i+8)]))
	}
}
