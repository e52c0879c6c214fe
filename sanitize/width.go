package sanitize

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/graphemes"
)

// Width returns the number of terminal cells s takes, as a terminal of the
// DisplayFloor generation lays it out: tmux 3.3a on glibc 2.36, measured
// (see TestPaintedInTmux). Each code point takes the cells wcwidth gives
// it: none for a control, a nonspacing or enclosing mark (Mn, Me), a
// format character (Cf, the joiners among them) and a Hangul vowel or
// final jamo; two for an East_Asian_Width W or F character; one for the
// rest, spacing marks (Mc), regional indicators and keycaps included. A
// code point directly after U+200D ZWJ takes none: the terminal draws it
// in the joiner's cell (👨‍👩‍👧 is two cells, क्‍ष one). Selectors change
// nothing (☺️ is one cell, ⌚︎ two) and skin tones are not joined (👍🏽 is
// four cells).
//
// It measures text that Clean has returned; on other text it counts the
// same way, but a terminal may draw that text differently (an unassigned
// code point, say, is given a cell here and none there).
func Width(s string) int {
	n, _ := widthFrom(s, false)
	return n
}

// widthFrom is Width for s after a ZWJ if zwjBefore, and reports whether s
// ends with one.
func widthFrom(s string, zwjBefore bool) (int, bool) {
	n := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf && !zwjBefore {
			if b >= 0x20 && b != 0x7F {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !zwjBefore {
			n += cells(r)
		}
		zwjBefore = r == zwj
	}
	return n, zwjBefore
}

// TruncateWidth returns s if it takes at most w cells; otherwise the
// longest run of whole grapheme clusters (UAX #29) from the start of s
// that leaves room for tail, followed by tail. With no room even for
// tail, it returns as much of tail as fits.
func TruncateWidth(s string, w int, tail string) string {
	if Width(s) <= w {
		return s
	}
	tw := Width(tail)
	if tw > w {
		return TruncateWidth(tail, w, "")
	}
	used, cut := 0, 0
	zwjBefore := false
	g := graphemes.FromString(s)
	for g.Next() {
		c, z := widthFrom(g.Value(), zwjBefore)
		if used+c+tw > w {
			break
		}
		used, zwjBefore = used+c, z
		cut = g.End()
	}
	return strings.TrimRight(s[:cut], " ") + tail
}

// cells is the width of the code point r alone.
func cells(r rune) int {
	switch {
	case r < 0x20 || 0x7F <= r && r < 0xA0:
		return 0
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || unicode.Is(gcbVT, r):
		return 0
	case unicode.Is(wide, r):
		return 2
	}
	return 1
}

// IsPrepend reports whether r has Grapheme_Cluster_Break=Prepend (UAX
// #29, Unicode 15.0.0): it joins the character after it into its cluster,
// so in a frame it would glue the frame's own bracket to the text
// (relay's notification source).
func IsPrepend(r rune) bool { return unicode.Is(gcbPrepend, r) }
