package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Each of the seven formats split by a character the sanitizer keeps: a
// combining mark, fullwidth letters, a Cyrillic or Greek lookalike. The
// span of the original text becomes the marker; the text around it stays.
func TestFoldedSecrets(t *testing.T) {
	toFullwidth := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			if c > ' ' && c < 0x7f {
				b.WriteRune(rune(c) + 0xFEE0)
			} else {
				b.WriteByte(c)
			}
		}
		return b.String()
	}
	// at puts r in place of, or after, the letter past a third of s that
	// has a lookalike (the prefix stays: it is what the rule keys on).
	lookalike := map[byte]rune{'a': 'а', 'e': 'е', 'o': 'о', 'p': 'р', 'c': 'с', 'x': 'х', 'A': 'Α', 'B': 'В', 'E': 'Ε', 'K': 'К', 'M': 'М', 'H': 'Η', 'O': 'О', 'P': 'Р', 'T': 'Т', 'X': 'Χ'}
	replaceOne := func(s string) string {
		for i := len(s) / 3; i < len(s); i++ {
			if r, ok := lookalike[s[i]]; ok {
				return s[:i] + string(r) + s[i+1:]
			}
		}
		t.Fatalf("no letter with a lookalike in %q", s)
		return ""
	}
	markAfter := func(mark string) func(string) string {
		return func(s string) string { i := len(s) / 2; return s[:i] + mark + s[i:] }
	}
	splits := []struct {
		name  string
		split func(string) string
	}{
		{"a combining acute", markAfter("\u0301")},
		{"two combining marks", markAfter("\u0308\u0323")},
		{"fullwidth", toFullwidth},
		{"a lookalike", replaceOne},
	}
	for _, f := range sevenFormats(newRand(51)) {
		for _, s := range splits {
			split := s.split(f.secret)
			if split == f.secret || !utf8.ValidString(split) {
				t.Fatalf("%s, %s: the split did nothing", f.name, s.name)
			}
			in := "deploy failed: " + split + " (retry 2)"
			want := "deploy failed: " + Marker(f.rule) + " (retry 2)"
			if out, counts := Text(in); out != want || counts[f.rule] != 1 {
				t.Errorf("%s, %s: Text(%.80q…)\n = %.120q %v\nwant %q", f.name, s.name, in, out, counts, want)
			}
			if out, _ := Message(in); out != want {
				t.Errorf("%s, %s: Message = %.120q, want %q", f.name, s.name, out, want)
			}
		}
	}
}

// Words of other scripts and accented words stay as they are.
func TestFoldingLeavesWords(t *testing.T) {
	for _, in := range []string{
		"ошибка: сервер недоступен, повторите попытку",
		"σφάλμα: ο διακομιστής δεν απαντά",
		"café résumé naïve ｈｅｌｌｏ",
		"token сорок",
	} {
		if out, counts := Text(in); out != in || counts != nil {
			t.Errorf("Text(%q) = %q %v, want it unchanged", in, out, counts)
		}
	}
	if mayFold([]byte("plain ascii text")) || mayFold("ошибка сервера") {
		t.Error("mayFold is true where nothing folds")
	}
}
