package sanitize

import "unicode/utf8"

// The four invisible characters (U+200C ZWNJ, U+200D ZWJ, U+FE0E, U+FE0F)
// survive only where they have a visible effect; anywhere else they could
// carry a hidden payload. They are held as pending until the next kept
// character, and judged then, after removal and in NFC order, by allowed.

const (
	zwnj = 0x200C
	zwj  = 0x200D
	vs15 = 0xFE0E
	vs16 = 0xFE0F
)

// Emoji kinds of a kept item, for emoji ZWJ sequences (UTS #51): an
// element is an Extended_Pictographic character with its optional U+FE0F
// or skin-tone modifier.
const (
	kOther uint8 = iota
	kExt         // an Extended_Pictographic character
	kElem        // U+FE0F or a skin-tone modifier ending an element
	kZWJ         // a kept U+200D
)

// kept updates the joiner context after a kept visible character with
// properties p.
func (c *cleaner[T]) kept(p props) {
	if !p.has(propTransp) {
		c.jl = p.has(propJoinsLeft)
	}
	k := kOther
	switch {
	case p.has(propExtPict):
		k = kExt
	case p.has(propEmojiMod) && c.k1 == kExt:
		k = kElem
	}
	c.k2, c.k1 = c.k1, k
}

// joiner records one of the four invisible characters at input offset at.
func (c *cleaner[T]) joiner(r rune, at int) {
	if c.runN == 0 {
		c.runOK = c.prev == prevVisible && !c.space
	}
	if c.runN < 2 {
		c.run[c.runN], c.runAt[c.runN] = r, at
	}
	if c.runN < 3 {
		c.runN++
	}
}

// endRun writes or drops the pending joiners. The kept character that
// follows them has properties next, if hasNext (otherwise a space or the
// end of the input follows). It returns false once the limit is passed.
//
// Two joiners never stand side by side, except U+FE0F U+200D inside an
// emoji ZWJ sequence: of two pending joiners, the one whose context holds
// with the other removed is kept, and neither if both hold; three or more
// are removed whole. So a run of joiners cannot encode anything but which
// single joiner the context allows.
func (c *cleaner[T]) endRun(next props, hasNext bool) bool {
	n := c.runN
	c.runN = 0
	if !c.runOK || n > 2 {
		return true
	}
	if c.dirty {
		// The character before the joiners is judged in NFC order.
		c.normalize()
	}
	prev := lookup(c.lastRune())
	var keep [2]bool
	a, b := c.run[0], c.run[1]
	switch {
	case n == 1:
		keep[0] = c.allowed(a, prev, next, hasNext)
	case a == vs16 && b == zwj && c.k1 == kExt && hasNext && next.has(propExtPict):
		keep = [2]bool{true, true}
	default:
		ka, kb := c.allowed(a, prev, next, hasNext), c.allowed(b, prev, next, hasNext)
		if ka != kb {
			keep = [2]bool{ka, kb}
		}
	}
	for k := range n {
		if !keep[k] {
			continue
		}
		if !c.boundary() {
			return false
		}
		r := c.run[k]
		if at := c.runAt[k]; at >= 0 {
			c.copySrc(at, at+3) // all four joiners are 3 bytes long
		} else {
			c.flushSpan()
			c.out = utf8.AppendRune(c.out, r)
		}
		c.units++
		c.prev = prevJoiner
		c.noLow = false
		c.jl = false
		kind := kOther
		switch {
		case r == zwj:
			kind = kZWJ
			c.glue = true // GB11 and GB9c: what follows stays in the cluster
			c.noLow = hasNext && next.has(propVirama)
		case r == vs16 && c.k1 == kExt:
			kind = kElem
		}
		c.k2, c.k1 = c.k1, kind
	}
	return true
}

// allowed reports whether the joiner r has a visible effect between the
// kept character before it (prev, in NFC order) and the one after it
// (next, if hasNext).
func (c *cleaner[T]) allowed(r rune, prev, next props, hasNext bool) bool {
	switch r {
	case zwnj:
		// After a virama, or between a letter that joins to the left and
		// one that joins to the right, transparent marks skipped on the
		// left (RFC 5892 Appendix A.1).
		return prev.has(propVirama) || c.jl && hasNext && next.has(propJoinsRt)
	case zwj:
		// After a virama (RFC 5892 Appendix A.2), or before one after a
		// character of a script that has one (Bengali র‍্য), between two
		// emoji elements, or in the joining context above (Arabic-script
		// forced joining).
		return prev.has(propVirama) ||
			hasNext && (next.has(propVirama) && prev.has(propViramaScript) ||
				(c.k1 == kExt || c.k1 == kElem) && next.has(propExtPict) ||
				c.jl && next.has(propJoinsRt))
	case vs15:
		return prev.has(propTextVS) && !prev.has(propKeycap)
	case vs16:
		if prev.has(propKeycap) {
			return hasNext && next.has(propKeycapEnd)
		}
		// A variation sequence, or the last element of an emoji ZWJ
		// sequence.
		return prev.has(propEmojiVS) || c.k1 == kExt && c.k2 == kZWJ
	}
	return false
}

// lastRune returns the last character of the output (there is one when a
// joiner is pending: the character before it is in the open segment, which
// a Writer never flushes).
func (c *cleaner[T]) lastRune() rune {
	if c.hi > c.lo {
		return lastRuneOf(c.src[c.lo:c.hi])
	}
	return lastRuneOf(c.out)
}

func lastRuneOf[S text](s S) rune {
	r, _ := utf8.DecodeLastRuneInString(string(s[max(0, len(s)-utf8.UTFMax):]))
	return r
}
