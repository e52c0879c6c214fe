package frame

import (
	"strings"
	"testing"
	"unicode"

	"github.com/diagrelay/diagrelay/sanitize"
)

// Source's result always starts with a letter or digit and holds
// only the characters the frame allows, whatever the source.
func TestFrameSourceShape(t *testing.T) {
	for _, src := range []string{"", "a", "_a", "\u0300", "\u0d4e\u0d4e", "a\u0d4e\u0301", "١٢", "ـa", "#1", "@x"} {
		got := Source(src)
		for i, c := range got {
			if i == 0 && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
				t.Errorf("Source(%+q) = %+q starts with %U", src, got, c)
			}
			if sanitize.IsPrepend(c) {
				t.Errorf("Source(%+q) = %+q holds Prepend %U", src, got, c)
			}
		}
	}
}

// Issue 19 channel 5, frame lookalikes: a payload in the marks and
// punctuation before a source's first letter (which would combine with
// the frame's "[" or pass for its own decoration). The decoder reads it
// back from the source, and nothing from the frame: every payload gives
// the same frame. (The payload follows a "_": a text starts with a base,
// so the sanitizer itself drops marks at the very start.)
func TestFrameLookalikesCarryNothing(t *testing.T) {
	encode := func(p []byte) string {
		var b strings.Builder
		for _, c := range p {
			for k := 6; k >= 0; k -= 2 {
				b.WriteRune([]rune{0x0338, 0x20E5, '-', '.'}[c>>k&3])
			}
		}
		return "_" + b.String() + "lint"
	}
	decode := func(s string) []byte {
		var out []byte
		var c byte
		n := 0
		for _, r := range strings.TrimPrefix(s, "_") {
			d := strings.IndexRune("\u0338\u20e5-.", r)
			if d < 0 {
				break
			}
			// IndexRune gives byte offsets: U+0338 at 0, U+20E5 at 2.
			c = c<<2 | byte(map[int]int{0: 0, 2: 1, 5: 2, 6: 3}[d])
			if n++; n == 4 {
				out, c, n = append(out, c), 0, 0
			}
		}
		return out
	}
	for _, p := range [][]byte{{0}, {0xFF}, {0x1B, 0x9C}, []byte("pwned")} {
		src := sanitize.Source(encode(p))
		if got := decode(src); string(got) != string(p) {
			t.Fatalf("the decoder does not read the sanitized source: %x, want %x", got, p)
		}
		if got := Source(src); got != "lint" || len(decode(got)) != 0 {
			t.Errorf("payload %x: frame %+q", p, got)
		}
	}
}

// The sources Source returns without rewriting are exactly those its
// rewrite leaves alone: the shortcut changes no result.
func FuzzSourceShortcut(f *testing.F) {
	for _, s := range []string{"", "lint", "go-vet", "a.b_c-d/e@f:g+h#i", "_a", "#1", "1#", "a b", "lint]", "ab\u0301", "\u0d4ea", "Z9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if kept(s) && rewrite(s) != s {
			t.Fatalf("kept(%+q), but the rewrite gives %+q", s, rewrite(s))
		}
		if !kept(s) && rewrite(s) == s && isASCII(s) {
			t.Fatalf("%+q is not kept, but the rewrite leaves it as it is", s)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
