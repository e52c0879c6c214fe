package sanitize

import "unicode/utf8"

// feed runs the cleaner over s, a piece of the input. If final is false and
// s ends with an incomplete UTF-8 sequence, feed stops before it and returns
// its offset, so the caller can prepend it to the next piece; otherwise it
// returns len(s) (or less once the cleaner is done).
func (c *cleaner[T]) feed(s T, final bool) int {
	c.src = s
	c.spAt, c.runAt = -1, [2]int{-1, -1} // offsets into an earlier piece
	i := 0
	if c.esc != escNone {
		i = c.escape(s, 0)
	}
	for i < len(s) && !c.done {
		b := s[i]
		if b-0x21 < 0x5E { // printable ASCII other than space
			c.invalid = false
			if c.runN > 0 || c.glue {
				// Pending joiners, or a cluster this character may
				// continue: one character the slow way.
				c.keepRune(lookup(rune(b)), i, i+1)
				i++
				continue
			}
			i = c.textRun(s, i)
			continue
		}
		if b < utf8.RuneSelf {
			c.invalid = false
			i++
			switch b {
			case ' ':
				c.spaceChar(i - 1)
			case '\t', '\n', '\v', '\f', '\r':
				c.spaceChar(-1)
			case 0x1B:
				c.esc = escStart
				i = c.escape(s, i)
			}
			// Other C0 controls and DEL are removed.
			continue
		}
		r, size := decode(s, i)
		if size == 0 {
			if !final && !utf8.FullRuneInString(head(s, i)) {
				return i
			}
			// One U+FFFD per maximal run of bytes that are not part of a
			// valid character. decode checks every continuation byte, so
			// a lead byte cannot hide the ESC after it.
			if !c.invalid {
				c.invalid = true
				c.replacement()
			}
			i++
			continue
		}
		c.invalid = false
		if r < 0xA0 { // C1 controls
			i += size
			switch r {
			case 0x85:
				c.spaceChar(-1)
			case 0x9B:
				c.esc = escCSI
				i = c.escape(s, i)
			case 0x90, 0x98, 0x9D, 0x9E, 0x9F: // DCS, SOS, OSC, PM, APC
				c.esc = escString
				i = c.escape(s, i)
			}
			continue
		}
		switch p := lookup(r); {
		case p&runMask == runProps && c.runN == 0 && !c.glue:
			i = c.textRun(s, i)
			continue
		case isRunMark(p) && c.prev == prevVisible && c.runN == 0 && !c.space && !c.noLow:
			i = c.markRun(s, i)
			continue
		case p.kind() == kindKeep:
			c.keepRune(p, i, i+size)
		case p.kind() == kindSpace:
			c.spaceChar(-1)
		case p.kind() == kindJoiner:
			c.joiner(r, i)
		case p.has(propAfterFloor):
			c.afterFloor()
		}
		i += size
	}
	return i
}

// detach copies everything the cleaner still refers to in src, for a
// caller that is about to reuse the memory behind it.
func (c *cleaner[T]) detach() {
	c.flushSpan()
	var none T
	c.src, c.lo, c.hi = none, 0, 0
	c.spAt, c.runAt = -1, [2]int{-1, -1}
}

// decode returns the character at s[i], where s[i] >= 0x80, and its length
// in bytes, or length 0 if the bytes there are not a complete, valid UTF-8
// encoding (Unicode Table 3-7: no overlongs, surrogates or values past
// U+10FFFF). The common 2- and 3-byte forms are decoded inline.
func decode[S text](s S, i int) (rune, int) {
	if b0 := s[i]; b0 >= 0xC2 && b0 < 0xF0 && i+2 < len(s) {
		b1, b2 := s[i+1], s[i+2]
		if b0 < 0xE0 {
			if b1&0xC0 == 0x80 {
				return rune(b0&0x1F)<<6 | rune(b1&0x3F), 2
			}
		} else if b1&0xC0 == 0x80 && b2&0xC0 == 0x80 {
			if r := rune(b0&0x0F)<<12 | rune(b1&0x3F)<<6 | rune(b2&0x3F); r >= 0x800 && r&0xF800 != 0xD800 {
				return r, 3
			}
		}
	}
	return decodeSlow(s, i)
}

func decodeSlow[S text](s S, i int) (rune, int) {
	r, n := utf8.DecodeRuneInString(head(s, i))
	if r == utf8.RuneError && n == 1 {
		return 0, 0
	}
	return r, n
}
