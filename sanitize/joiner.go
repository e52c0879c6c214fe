package sanitize

import (
	"unicode"
	"unicode/utf8"
)

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
	keep := c.runKeeps(next, hasNext)
	n := min(c.runN, 2) // three or more keep nothing
	c.runN = 0
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
		c.afterNew = false
		c.cb += 3
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

// runKeeps reports which of the pending joiners endRun keeps before the
// kept character with properties next (if hasNext). It changes nothing but
// the normalization of the open segment, which endRun would do anyway.
func (c *cleaner[T]) runKeeps(next props, hasNext bool) (keep [2]bool) {
	n := c.runN
	if !c.runOK || n > 2 {
		return keep
	}
	if c.dirty {
		// The character before the joiners is judged in NFC order.
		c.normalize()
	}
	prev := lookup(c.lastRune())
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
	// A kept joiner goes into the cell of the character before it, and
	// what follows a kept ZWJ joins that cell too (tmux draws it there).
	// A joiner that would take the cell past cellBytes is removed, as tmux
	// would drop it; a ZWJ also when the character after it would (a
	// space too, which tmux also draws there): so an emoji ZWJ sequence
	// longer than a cell is split before the element that would not fit,
	// which starts a cell of its own and is drawn.
	if keep == [2]bool{} {
		return keep
	}
	cb := c.cell() // the cell of the character before the joiners (runKeeps made it current for endRun)
	for k, ok := range keep {
		if !ok {
			continue
		}
		cb += 3
		if cb > cellBytes || c.run[k] == zwj && (hasNext && cb+next.nfdBytes() > cellBytes || c.spaceEnd && cb+1 > cellBytes) {
			keep[k] = false
		}
	}
	// U+FE0F kept for the ZWJ after it (an element before its joiner)
	// stays only if it holds alone, when that ZWJ goes.
	if n == 2 && keep[0] && !keep[1] && a == vs16 && b == zwj {
		keep[0] = c.allowed(a, prev, next, hasNext)
	}
	return keep
}

// runGlues reports whether endRun would keep a ZWJ before the kept
// character with properties next, which then continues the cluster (GB11,
// GB9c): only then do pending joiners make next count toward the marks of
// the cluster before them.
func (c *cleaner[T]) runGlues(next props) bool {
	k := c.runKeeps(next, true)
	return k[0] && c.run[0] == zwj || k[1] && c.run[1] == zwj
}

// runKept returns how many of the pending joiners endRun would keep
// before the kept character with properties next.
func (c *cleaner[T]) runKept(next props) int {
	k := c.runKeeps(next, true)
	n := 0
	for _, ok := range k {
		if ok {
			n++
		}
	}
	return n
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
		return prev.has(propVirama) && c.viramaAfterLetter() ||
			c.jl && hasNext && next.has(propJoinsRt)
	case zwj:
		// After a virama (RFC 5892 Appendix A.2), or before one after a
		// letter of the virama's script (Bengali র‍্য), or between two
		// emoji elements. Not in Arabic-script joining contexts: there a
		// ZWJ between two joining letters changes nothing.
		return prev.has(propVirama) && c.viramaAfterLetter() ||
			hasNext && (next.has(propVirama) && c.letterOf(c.nextVirama) ||
				(c.k1 == kExt || c.k1 == kElem) && next.has(propExtPict))
	case vs15:
		// textVariation holds only the characters whose default is emoji
		// (or that have a standardized sequence with U+FE0E).
		return prev.has(propTextVS) && !prev.has(propKeycap)
	case vs16:
		if prev.has(propKeycap) {
			return hasNext && next.has(propKeycapEnd)
		}
		// A variation sequence after a text-default character
		// (emojiVariation), or the last element of an emoji ZWJ sequence.
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

// viramaAfterLetter reports whether the virama that ends the output follows
// a letter of its own script, with only non-starters (marks) between: a
// virama gives a joiner its context only there ("a\u1039 ZWNJ b" keeps
// no joiner).
func (c *cleaner[T]) viramaAfterLetter() bool {
	var buf [tailMax]byte
	t := c.tail(&buf)
	v, n := utf8.DecodeLastRune(t)
	return c.letterBefore(t[:len(t)-n], v)
}

// letterOf reports whether the output ends with a letter of the script of
// the virama v, with only non-starters after it.
func (c *cleaner[T]) letterOf(v rune) bool {
	var buf [tailMax]byte
	return c.letterBefore(c.tail(&buf), v)
}

// letterBefore walks back over the non-starters at the end of t to the
// starter before them and reports whether it is a letter of v's script.
func (c *cleaner[T]) letterBefore(t []byte, v rune) bool {
	for len(t) > 0 {
		r, n := utf8.DecodeLastRune(t)
		t = t[:len(t)-n]
		if p := lookup(r); p.starter() {
			sc := scriptOf(v)
			return sc != nil && unicode.IsLetter(r) && unicode.Is(sc, r)
		}
	}
	return false
}

// scriptOf returns the table of the script with a virama that r is in, or
// nil.
func scriptOf(r rune) *unicode.RangeTable {
	for _, t := range viramaScripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

// tailMax bounds the output tail the virama rule reads: a starter and the
// marks a cluster keeps (maxMarks of at most 4 bytes each, a virama and a
// mark norm counts twice among them).
const tailMax = 4 * (maxMarks + 4)

// tail copies the last bytes of the output into buf, at most tailMax of
// them and none before the open NFC segment (a Writer may have written
// out what comes before it, so Clean and Writer see the same), and returns
// them.
func (c *cleaner[T]) tail(buf *[tailMax]byte) []byte {
	span := c.src[c.lo:c.hi]
	from := max(c.seg, c.olen()-tailMax)
	n := 0
	if from < len(c.out) {
		n = copy(buf[:], c.out[from:])
		from = len(c.out)
	}
	n += copy(buf[n:], span[from-len(c.out):])
	return buf[:n]
}
