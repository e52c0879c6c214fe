package redact

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// naiveOccurrences is every (keyword, end) of keywords in text, ASCII case
// folded and the three non-ASCII letters read as theirs, by a search at
// every offset.
func naiveOccurrences(keywords []string, text string) []string {
	var folded []byte
	var ends []int // by folded byte: where it ends in text
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case strings.HasPrefix(text[i:], "\u212a"):
			c, i = 'k', i+2
		case strings.HasPrefix(text[i:], "\u0130"):
			c, i = 'i', i+1
		case strings.HasPrefix(text[i:], "\u017f"):
			c, i = 's', i+1
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		folded = append(folded, c)
		ends = append(ends, i+1)
	}
	var out []string
	for k, w := range keywords {
		for i := 0; i+len(w) <= len(folded); i++ {
			if string(folded[i:i+len(w)]) == w {
				out = append(out, fmt.Sprint(k, "@", ends[i+len(w)-1]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// scanAll is every occurrence the scan reports, sorted.
func scanAll(s *scanner, text string, known bool) []string {
	var got []string
	scanKnown(s, text, known, func(k uint16, end int) { got = append(got, fmt.Sprint(k, "@", end)) })
	slices.Sort(got)
	return got
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
		// Texts short and long (the scan splits an ASCII one over twice its
		// longest keyword in two), some with non-ASCII bytes anywhere:
		// letters read as ASCII ones, inside keywords too, and others.
		nonASCII := []string{"\u212a", "\u0130", "\u017f", "é", "\u202e", "\xff"}
		fold := strings.NewReplacer("k", "\u212a", "i", "\u0130", "s", "\u017f")
		for n := range 600 {
			var b strings.Builder
			for range 1 + rng.IntN(4+n/10) {
				b.WriteString(pick(rng, alnum+" _-.=:/", rng.IntN(12)))
				w := c.keywords[rng.IntN(len(c.keywords))]
				switch rng.IntN(4) {
				case 0:
					w = strings.ToUpper(w)
				case 1:
					if n%3 == 0 {
						w = fold.Replace(w)
					}
				}
				b.WriteString(w)
				if n%3 == 0 && rng.IntN(4) == 0 {
					b.WriteString(nonASCII[rng.IntN(len(nonASCII))])
				}
			}
			text := b.String()
			got := scanAll(s, text, false)
			want := naiveOccurrences(c.keywords, text)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: scan(%q) = %v, want %v", c.name, text, got, want)
			}
			if isASCII(text) && !slices.Equal(scanAll(s, text, true), want) {
				t.Fatalf("%s: scan(%q) known ASCII = %v, want %v", c.name, text, scanAll(s, text, true), want)
			}
			found += len(got)
		}
		if found == 0 {
			t.Errorf("%s: no occurrence found", c.name)
		}
	}
}

// FuzzScan: the keyword scan reports exactly the occurrences a naive
// search finds, on any text, in both of its forms (split in two and not).
func FuzzScan(f *testing.F) {
	for _, s := range []string{"", "token", "xx\u212aey=api_key", strings.Repeat("secret_access_key ", 8) + "\xff" + "Authorization"} {
		f.Add(s)
	}
	s := book().scan
	f.Fuzz(func(t *testing.T, text string) {
		want := naiveOccurrences(book().keywords, text)
		if got := scanAll(s, text, false); !slices.Equal(got, want) {
			t.Fatalf("scan(%q) = %v, want %v", text, got, want)
		}
		if got := scanAll(s, text, true); isASCII(text) && !slices.Equal(got, want) {
			t.Fatalf("scan(%q) known ASCII = %v, want %v", text, got, want)
		}
	})
}
