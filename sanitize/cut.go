package sanitize

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/graphemes"
)

// ellipsis marks a cut text. It is one UTF-16 unit, a starter that composes
// with nothing, and is not a space, so appending it keeps the text clean.
const ellipsis = "…"

// units16 returns the length of the valid UTF-8 text s in UTF-16 code units:
// one per character, two for a character outside the BMP. It counts eight
// bytes at a time: every byte but a continuation byte starts a character,
// and a 4-byte lead (0xF0 and up) adds the second unit.
func units16[T text](s T) int {
	n, i := 0, 0
	for ; i+8 <= len(s); i += 8 {
		n += wordUnits(load64(s, i))
	}
	for ; i < len(s); i++ {
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

// wordUnits is units16 of the eight bytes in w: one bit (7) for each byte
// that is not 10xxxxxx, another (6) for each 1111xxxx, counted at once.
func wordUnits(w uint64) int {
	lead := (^w | w<<1) & msb
	four := w & (w << 1) & (w << 2) & (w << 3) & msb
	return bits.OnesCount64(lead | four>>1)
}

// cutLookBack bounds how far back from the cut a known boundary is looked
// for, in bytes; without one the segmentation starts at the beginning.
const cutLookBack = 1024

// cut shortens the clean text x, of units UTF-16 units (more than limit),
// to at most limit units ending in an ellipsis: it keeps the longest run of whole grapheme
// clusters that leaves room for the ellipsis, or, if not even the first
// cluster fits, as many whole code points of it as fit. A space, and then
// any of the four invisible characters, before the ellipsis are dropped.
//
// A prefix of an NFC text is NFC (composition only looks backward), and each
// rule the cleaner enforces holds for a prefix too, so the result is clean.
func cut(x string, limit, units int) string {
	room := limit - 1
	if room < len(x) && isASCII(x[:room+1]) {
		// Between two ASCII characters there is always a cluster
		// boundary (CR LF, the exception, cannot occur here).
		return strings.TrimSuffix(x[:room], " ") + ellipsis // (no joiners in ASCII)
	}
	// p is where the room ends: the longest run of whole code points that
	// fits, found by dropping characters from the end (the cleaner stops
	// soon after the limit is passed, so there are few). The cut is the
	// last cluster boundary at or before it.
	p := len(x)
	for units > room {
		p--
		for x[p]&0xC0 == 0x80 {
			p--
		}
		units--
		if x[p] >= 0xF0 {
			units-- // a surrogate pair
		}
	}
	// Segment from a boundary found by looking back a little, not from the
	// start: there is one before every space that does not follow a Prepend
	// character (no rule of UAX #29 joins a space to what precedes it
	// otherwise).
	start := 0
	for q := p - 1; q > 0 && q >= p-cutLookBack; q-- {
		if x[q] == ' ' && !unicode.Is(gcbPrepend, lastRuneOf(x[:q])) {
			start = q
			break
		}
	}
	end := start
	g := graphemes.FromString(x[start:])
	for g.Next() && start+g.End() <= p {
		end = start + g.End()
	}
	if end == 0 {
		end = p // not even the first cluster fits: cut it at a code point
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
