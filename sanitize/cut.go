package sanitize

import (
	"strings"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/graphemes"
)

// ellipsis marks a cut text. It is one UTF-16 unit, a starter that composes
// with nothing, and is not a space, so appending it keeps the text clean.
const ellipsis = "…"

// units16 returns the length of the valid UTF-8 text s in UTF-16 code units:
// one per character, two for a character outside the BMP.
func units16[T string | []byte](s T) int {
	n := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b&0xC0 != 0x80 {
			n++
		}
		if b >= 0xF0 {
			n++
		}
	}
	return n
}

// cut shortens the clean text x, longer than limit units, to at most limit
// units ending in an ellipsis: it keeps the longest run of whole grapheme
// clusters that leaves room for the ellipsis, or, if not even the first
// cluster fits, as many whole code points of it as fit. A space, and then
// any of the four invisible characters, before the ellipsis are dropped.
//
// A prefix of an NFC text is NFC (composition only looks backward), and each
// rule the cleaner enforces holds for a prefix too, so the result is clean.
func cut(x string, limit int) string {
	room := limit - 1
	if room < len(x) && isASCII(x[:room+1]) {
		// Between two ASCII characters there is always a cluster
		// boundary (CR LF, the exception, cannot occur here).
		return strings.TrimSuffix(x[:room], " ") + ellipsis // (no joiners in ASCII)
	}
	end, n := 0, 0
	g := graphemes.FromString(x)
	for g.Next() {
		u := units16(g.Value())
		if n+u > room {
			break
		}
		n += u
		end = g.End()
	}
	if end == 0 {
		for i, r := range x {
			u := 1
			if r > 0xFFFF {
				u = 2
			}
			if n+u > room {
				end = i
				break
			}
			n += u
		}
	}
	return trimJoiners(strings.TrimSuffix(x[:end], " ")) + ellipsis
}

// trimJoiners drops the invisible characters at the end of a cut text: each
// goes with what followed it, which the cut removed (and the ellipsis
// gives none of them a context).
func trimJoiners(x string) string {
	for {
		r, n := utf8.DecodeLastRuneInString(x)
		if r != zwnj && r != zwj && r != vs15 && r != vs16 {
			return x
		}
		x = x[:len(x)-n]
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
