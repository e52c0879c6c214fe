package redact

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// naiveOccurrences is every (keyword, end) of keywords in text, ASCII case
// folded, by a search at every offset.
func naiveOccurrences(keywords []string, text string) []string {
	lower := strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, text)
	var out []string
	for k, w := range keywords {
		for i := 0; i+len(w) <= len(lower); i++ {
			if lower[i:i+len(w)] == w {
				out = append(out, fmt.Sprint(k, "@", i+len(w)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// The scan reports each occurrence of each keyword, overlapping ones and
// suffixes included, in both of its forms: the premultiplied table (the
// rules' keywords) and the slice (the stopwords, too many states for the
// table).
func TestScannerFindsEveryOccurrence(t *testing.T) {
	var stopwords []string
	for _, s := range allSpecs() {
		for _, a := range s.Allow {
			if len(a.Stopwords) > len(stopwords) {
				stopwords = a.Stopwords
			}
		}
	}
	rng := newRand(3)
	for _, c := range []struct {
		name     string
		keywords []string
		table    bool
	}{
		{"rules", book().keywords, true},
		{"stopwords", stopwords, false},
		{"overlapping", []string{"he", "she", "his", "hers", "e", "sheh"}, true},
	} {
		s := newScanner(c.keywords)
		if (s.table != nil) != c.table {
			t.Fatalf("%s: table %v, want %v", c.name, s.table != nil, c.table)
		}
		found := 0
		for range 300 {
			var b strings.Builder
			for range 1 + rng.IntN(12) {
				b.WriteString(pick(rng, alnum+" _-.=:/", rng.IntN(12)))
				w := c.keywords[rng.IntN(len(c.keywords))]
				if rng.IntN(2) == 0 {
					w = strings.ToUpper(w)
				}
				b.WriteString(w)
			}
			text := b.String()
			var got []string
			s.scan(text, func(k uint16, end int) { got = append(got, fmt.Sprint(k, "@", end)) })
			slices.Sort(got)
			if want := naiveOccurrences(c.keywords, text); !slices.Equal(got, want) {
				t.Fatalf("%s: scan(%q) = %v, want %v", c.name, text, got, want)
			}
			found += len(got)
		}
		if found == 0 {
			t.Errorf("%s: no occurrence found", c.name)
		}
	}
}
