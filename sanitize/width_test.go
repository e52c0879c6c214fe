package sanitize

import "testing"

// The widths tmux 3.3a on glibc 2.36 gives (each one measured there, and
// checked again by TestPaintedInTmux where tmux is installed).
func TestWidth(t *testing.T) {
	for s, want := range map[string]int{
		"":                     0,
		"ab":                   2,
		"日本":                   4,
		"\U00020000\U00031350": 4,
		"👍🏽":                   4,
		"👨\u200d👩\u200d👧":      2,
		"🏳\ufe0f\u200d🌈":       1,
		"👩🏽\u200d💻":            4,
		"🇯🇵":                   2,
		"🇯🇵🇫":                  3,
		"1\ufe0f\u20e3":        1,
		"a\u0301\u0301b":       2,
		"क्\u200dष":            1,
		"র\u200d্য":            2,
		"⌚\ufe0e":              2,
		"☺\ufe0f":              1,
		"Tiếng Việt":           10,
		"བསྒྲུབས":              4,
		"שָׁלוֹם":              4,
		"می\u200cخواهم":        7,
		"a\u093e":              2,
		"\u1100\u1161\u11a8":   2,
		"a\u20dd":              1,
		"x \u0301y":            3,
		"\x1b[31m":             4, // ESC takes none; the rest is text
	} {
		if got := Width(s); got != want {
			t.Errorf("Width(%+q) = %d, want %d", s, got, want)
		}
	}
}

func TestTruncateWidth(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"日本語", 5, "日本…"},
		{"日本語", 4, "日…"},
		{"flags 🇯🇵🇫🇷", 9, "flags 🇯🇵…"},
		{"flags 🇯🇵🇫🇷", 8, "flags…"},
		{"👨\u200d👩\u200d👧 x", 3, "👨\u200d👩\u200d👧…"},
		{"e\u0301\u0301xy", 2, "e\u0301\u0301…"},
		{"abc", 0, ""},
		{"abc", 1, "…"},
	} {
		got := TruncateWidth(c.s, c.w, "…")
		if got != c.want || Width(got) > c.w {
			t.Errorf("TruncateWidth(%+q, %d) = %+q (%d cells), want %+q", c.s, c.w, got, Width(got), c.want)
		}
	}
}
