package sanitize

import "unicode/utf8"

// markRun is the fast path of hostile text (Zalgo): the combining marks
// after a base, each of which keep would take one at a time. It applies
// the same cap (maxMarks marks, cellBytes bytes a cell) in one loop, and
// normalizes the segment from the marks it has decoded, without a second
// pass over them.

// A mark markRun takes: kept, of non-zero combining class (so a
// non-starter), without a decomposition, zero-width, and none of the
// characters with a rule of their own (a virama, which glues; Hangul
// jamo; the Khitan filler; emoji parts).
const (
	markMask = kindMask | propStarter | propNoDecomp | propZeroWidth | propGlue | propJamoVT |
		propKhitanFiller | propExtPict | propEmojiMod | propKeycapEnd
	markProps = kindKeep | propNoDecomp | propZeroWidth
)

// isRunMark reports whether markRun takes a character with properties p.
func isRunMark(p props) bool { return p&markMask == markProps && p.ccc() != 0 }

// markRun handles the run of marks isRunMark takes that starts at s[i],
// where the last character written is visible and no space or joiner is
// pending, and returns where the run ends.
func (c *cleaner[T]) markRun(s T, i int) int {
	var rs [maxMarks + 1]rune // the base, then the kept marks
	var cc [maxMarks + 1]uint8
	ss, cb := c.ss, c.cell()
	n, units := 1, 0
	j, end := i, i // end: after the last mark kept
	dropped, gap := false, false
	for j < len(s) && s[j] >= 0xC2 {
		r, size := decode(s, j)
		if size == 0 {
			break
		}
		p := lookup(r)
		if !isRunMark(p) {
			break
		}
		// As keep decides: past the cap or past the cell, removed.
		if add, w := p.marks(), p.nfdBytes(); ss+add <= maxMarks && cb+w <= cellBytes {
			ss, cb = ss+add, cb+w
			rs[n], cc[n] = r, p.ccc()
			n++
			gap = gap || dropped
			end = j + size
			units += 1 + size>>2
		} else {
			dropped = true
		}
		j += size
	}
	c.invalid = false
	if n == 1 {
		return j
	}
	c.ss, c.cb, c.cbStale = ss, cb, false
	c.units += units
	c.prev, c.afterNew = prevVisible, false
	if n == 2 {
		c.k2, c.k1 = c.k1, kOther
	} else {
		c.k2, c.k1 = kOther, kOther
	}
	// The open segment is the base alone, a starter without a
	// decomposition: its NFC form with the marks is made here. Otherwise
	// the marks are written as they are and normalize does it.
	base := c.lastRune()
	if pb := lookup(base); !c.dirty && c.olen()-c.seg == runeLen(base) && pb.starter() && pb.has(propNoDecomp) {
		var buf [4 * (maxMarks + 1)]byte
		nfc := composeMarks(buf[:0], base, rs[1:n], cc[1:n])
		if n := len(c.out); !gap && c.hi == i && c.lo != c.hi && c.seg >= n &&
			string(nfc) == string(c.src[c.lo+c.seg-n:end]) {
			c.hi = end // the input was NFC: the span goes on
			return j
		}
		c.flushSpan()
		c.out = append(c.out[:c.seg], nfc...)
		c.units = c.segUnits + units16(nfc)
		return j
	}
	c.dirty = true
	c.flushSpan()
	for _, m := range rs[1:n] {
		c.out = utf8.AppendRune(c.out, m)
	}
	return j
}

// runeLen is the length of r in UTF-8.
func runeLen(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}
