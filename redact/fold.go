package redact

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The folded view (docs/redaction.md, "The folded view"). The sanitizer
// keeps combining marks, fullwidth letters and Cyrillic or Greek letters,
// so one of them inside a token splits it where no rule matches
// ("ghp_ab\u0301c…", "ｇｈｐ＿…", "ghp_аbc…" with a Cyrillic а). The
// rules also run on a view of the text in which, inside each run of secret
// characters, combining marks are dropped, fullwidth ASCII becomes ASCII
// and the Cyrillic and Greek letters Unicode's confusables map to one
// Latin letter become it; a finding there redacts the span of the text it
// came from. A run that has no ASCII secret character and no fullwidth one
// (a Russian or Greek word) is left as it is.

// confusable maps the Cyrillic and Greek letters that Unicode's
// confusables.txt maps to a single basic Latin letter.
var confusable = map[rune]byte{
	// Cyrillic
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'У': 'Y', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ү': 'Y', 'Ӏ': 'I',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'α': 'a', 'ν': 'v', 'ρ': 'p', 'ι': 'i', 'γ': 'y',
	'ϲ': 'c', 'ϳ': 'j',
}

// foldRune is what r becomes inside a run: an ASCII secret character
// (ok), or nothing (drop: a combining mark). fullwidth says r was one.
func foldRune(r rune) (c byte, ok, drop, fullwidth bool) {
	switch {
	case r < utf8.RuneSelf:
		return byte(r), runClass[byte(r)] != 0, false, false
	case 0xFF01 <= r && r <= 0xFF5E:
		c = byte(r - 0xFEE0)
		return c, runClass[c] != 0, false, true
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		return 0, false, true, false
	}
	if c, found := confusable[r]; found {
		return c, true, false, false
	}
	// A letter with marks, as the sanitizer composes it ("S" and U+0301
	// become "Ś"): its base letter, if that is ASCII and the rest marks.
	var buf [utf8.UTFMax]byte
	d := norm.NFD.Properties(buf[:utf8.EncodeRune(buf[:], r)]).Decomposition()
	if len(d) > 1 && d[0] < utf8.RuneSelf && runClass[d[0]] != 0 {
		for _, m := range string(d[1:]) {
			if !unicode.Is(unicode.Mn, m) {
				return 0, false, false, false
			}
		}
		return d[0], true, false, false
	}
	return 0, false, false, false
}

// foldedView is the folded text and, for each of its bytes, the span of
// the text it came from.
type foldedView struct {
	text       string
	start, end []int32
}

// fold returns the folded view of text, and false when it is text itself.
func fold(text string) (foldedView, bool) {
	if !mayFold(text) {
		return foldedView{}, false
	}
	var out []byte
	var start, end []int32
	emit := func(c byte, s, e int) {
		out = append(out, c)
		start = append(start, int32(s))
		end = append(end, int32(e))
	}
	changed := false
	for i := 0; i < len(text); {
		// A run: the longest stretch of runes that fold to secret
		// characters or are dropped.
		j, ascii := i, false
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			c, ok, drop, full := foldRune(r)
			if !ok && !drop {
				break
			}
			ascii = ascii || ok && (r < utf8.RuneSelf || full) && c != 0
			j += n
		}
		if j == i { // not a run character: as it is
			_, n := utf8.DecodeRuneInString(text[i:])
			for k := i; k < i+n; k++ {
				emit(text[k], k, k+1)
			}
			i += n
			continue
		}
		for k := i; k < j; {
			r, n := utf8.DecodeRuneInString(text[k:])
			c, ok, drop, _ := foldRune(r)
			switch {
			case !ascii || r < utf8.RuneSelf:
				for m := k; m < k+n; m++ {
					emit(text[m], m, m+1)
				}
			case drop:
				changed = true
				if len(end) > 0 && int(end[len(end)-1]) == k {
					end[len(end)-1] = int32(k + n) // the mark goes with what it marks
				}
			case ok:
				changed = true
				emit(c, k, k+n)
			}
			k += n
		}
		i = j
	}
	if !changed {
		return foldedView{}, false
	}
	return foldedView{string(out), start, end}, true
}

// mayFold reports whether the folded view of text may differ from it: a
// fullwidth rune, or a rune that folds beside an ASCII secret character
// (it does not allocate: Clear asks it).
func mayFold[T string | []byte](text T) bool {
	prevASCII := false // the rune before is an ASCII secret character
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			prevASCII = runClass[c] != 0
			i++
			continue
		}
		var r rune
		var n int
		switch t := any(text).(type) {
		case string:
			r, n = utf8.DecodeRuneInString(t[i:])
		case []byte:
			r, n = utf8.DecodeRune(t[i:])
		}
		_, ok, drop, full := foldRune(r)
		nextASCII := i+n < len(text) && text[i+n] < utf8.RuneSelf && runClass[text[i+n]] != 0
		if full || (ok || drop) && (prevASCII || nextASCII) {
			return true
		}
		prevASCII = false
		i += n
	}
	return false
}

// foldedHits returns the hits of text's folded view, as spans of text.
func (b *ruleBook) foldedHits(text string, depth int) []hit {
	v, ok := fold(text)
	if !ok {
		return nil
	}
	hits := b.findHits(v.text, depth)
	for k, h := range hits {
		hits[k] = hit{start: int(v.start[h.start]), end: int(v.end[h.end-1]), rule: h.rule}
	}
	return hits
}
