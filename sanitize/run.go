package sanitize

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// A character a run may take: kept, NFC-stable, a starter, with no leading
// non-starters (trailing ones, as in é, are fine), that starts a grapheme
// cluster and does not glue the next character to its cluster.
const (
	runMask  = kindMask | propStable | propStarter | 3<<4 | propCont | propGlue
	runProps = kindKeep | propStable | propStarter
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// textRun writes the run of plain text that starts at s[i], a printable
// ASCII character or one with runProps, and returns where it ends. A run is
// such characters, single spaces between them, and complete CSI sequences,
// which are removed: no other rule applies to any of it, so it is copied
// as it is. This is the hot path; everything else goes through feed.
//
// While the output is still the window src[lo:hi], the run only extends
// it; once materialized, the run copies into out directly (eight bytes at a
// time for ASCII), with room reserved up front.
//
// A space at the end of the run is given back as pending: whether it is
// written depends on what follows.
func (c *cleaner[T]) textRun(s T, i int) int {
	if c.space && !c.writeSpace() { // (feed sends no pending joiners here)
		return i
	}
	if (c.dirty || c.limit > 0) && !c.boundarySlow() {
		return i
	}
	// With a limit, the run reads at most as many bytes as there are units
	// left before the limit is passed (a unit takes at least a byte), but
	// at least 4, one whole character. The next boundary then stops the
	// cleaner if the limit is passed. Without one, units are not counted.
	end := len(s)
	if c.limit > 0 {
		// Written so that no limit, however large, overflows: room is
		// only added to i when it is smaller than what is left of s.
		if room := c.limit - c.units; room < len(s)-i {
			end = i + max(room+1, utf8.UTFMax)
			end = min(end, len(s))
		}
	}
	mat := c.mat
	if !mat && c.lo != c.hi && c.hi != i {
		c.materialize() // a gap: the output is no longer a substring
		mat = true
	}
	var out []byte // out[:cap] once materialized; o is the length
	o := 0
	if mat {
		out, o = c.reserve(end - i)
	} else if c.lo == c.hi {
		c.lo, c.hi = i, i
	}
	start := c.olen()
	s = s[:end]
	j := i
loop:
	for j < len(s) {
		b := byteAt(s, j)
		switch {
		case b-0x20 < 0x5F: // printable ASCII or a space
			// A space after a space ends the run, also across a removed
			// CSI (which materializes the output). The run starts with a
			// non-space.
			if b == ' ' && (mat && o > start && byteAtB(out, o-1) == ' ' || !mat && j > i && byteAt(s, j-1) == ' ') {
				break loop
			}
			if j+8 > len(s) {
				break // one byte, below
			}
			// Eight bytes at a time while all are plain; this one is,
			// so at least one is taken. It is not a space after a space.
			if mat {
				j, o = copyPlain(out, o, s, j)
			} else {
				j = scanPlain(s, j)
			}
			continue
		case b == 0x1B:
			// A complete CSI sequence is removed without ending the run.
			k := csiEnd(s, j)
			if k < 0 {
				break loop
			}
			if !mat {
				c.hi = j
				c.materialize()
				mat = true
				out, o = c.reserve(len(s) - k)
			}
			j = k
			continue
		case b < 0xC2:
			break loop
		default:
			// Consecutive multi-byte characters, in a leaf function; the
			// first one again through decode and lookup if that stops at
			// once (it may only need its table block built).
			k := plainChars(s, j)
			if k == j {
				r, n := decode(s, j)
				if n == 0 || lookup(r)&runMask != runProps {
					break loop
				}
				k = plainChars(s, j+n)
			}
			if k == j {
				break loop
			}
			if mat {
				o = copyChars(out, o, s, j, k)
			}
			j = k
			continue
		}
		// A single ASCII byte.
		if mat {
			store8(out, o, b)
		}
		o++
		j++
	}
	spaceEnd := mat && o > start && byteAtB(out, o-1) == ' ' || !mat && j > i && byteAt(s, j-1) == ' '
	if mat {
		c.out = out[:o]
	} else {
		c.hi = j
	}
	if spaceEnd {
		// Give back the trailing space: the cleaner decides about it.
		c.space, c.spAt = true, -1
		if mat {
			c.out = c.out[:len(c.out)-1]
		} else {
			c.hi--
			c.spAt = c.hi
		}
	}
	// The open segment is the last character: a mark may still follow.
	if mat {
		runTail(c, c.out[start:], start)
	} else {
		runTail(c, c.src[c.lo+start:c.hi], start)
	}
	return j
}

// runTail sets the state after a text run whose output x was written at
// output offset start: the open segment is its last character, since a
// mark may still follow.
func runTail[T, X text](c *cleaner[T], x X, start int) {
	last := len(x) - 1
	for x[last] >= 0x80 && x[last] < 0xC0 {
		last--
	}
	c.ss = 0
	if x[last] >= 0x80 {
		r, _ := utf8.DecodeRuneInString(head(x, last))
		c.ss = lookup(r).trail()
	}
	c.prev = prevVisible
	// Every character of a run starts its own cluster and is not
	// transparent; only the last one is the joiners' context.
	p := lookup(lastRuneOf(x))
	c.glue, c.noLow = false, false
	c.jl, c.k2, c.k1 = p.has(propJoinsLeft), kOther, kOther
	if p.has(propExtPict) {
		c.k1 = kExt
	}
	c.seg = start + last
	if c.limit > 0 {
		c.segUnits = c.units + units16(x[:last])
		c.units = c.segUnits + units16(x[last:])
	}
}

// stops marks (with 0x80) the bytes of w, eight bytes of input, that a run
// does not take as they are: those outside printable ASCII, and a space
// after a space (prevSpace is 0x80 if the byte before w is one). It also
// returns the spaces. Both are exact up to the first marked byte, which is
// all that is used (a false mark above it only ends the chunk early).
func stops(w, prevSpace uint64) (m, sp uint64) {
	bad := ((w-0x20*lsb)&^w | (w + lsb) | w) & msb
	t := w ^ 0x20*lsb
	sp = (t - lsb) &^ t & msb
	return bad | sp&(sp<<8|prevSpace), sp
}

// scanPlain returns the end of the printable ASCII with single spaces at
// s[j:], where s[j] is one that the run takes and j+8 <= len(s), reading
// eight bytes at a time: it stops at the first byte it does not take or
// with fewer than eight bytes left.
func scanPlain[S text](s S, j int) int {
	var prevSpace uint64
	// 32 bytes at a time while no byte stops the run: the four words'
	// checks are independent but for the space carried between them.
	for j+32 <= len(s) {
		m0, s0 := stops(load64(s, j), prevSpace)
		m1, s1 := stops(load64(s, j+8), s0>>56)
		m2, s2 := stops(load64(s, j+16), s1>>56)
		m3, s3 := stops(load64(s, j+24), s2>>56)
		if m0|m1|m2|m3 != 0 {
			break
		}
		j += 32
		prevSpace = s3 >> 56
	}
	for j+8 <= len(s) {
		m, sp := stops(load64(s, j), prevSpace)
		if m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
		prevSpace = sp >> 56
	}
	return j
}

// copyPlain is scanPlain once the output is materialized: it copies to
// out[o:], where room is reserved for the rest of s plus 8 bytes, and
// returns where it stopped in s and out. It also goes through complete CSI
// sequences, which it removes, and words in other scripts, which it
// copies: they are the common interruptions, and going round textRun's
// switch for each costs more than the work itself. It is a leaf apart from
// those two calls, so that its loop keeps its state in registers.
func copyPlain[S text](out []byte, o int, s S, j int) (int, int) {
	var prevSpace uint64 // s[j] is not a space after a space
	for j+8 <= len(s) {
		w := load64(s, j)
		store64(out, o, w)
		m, sp := stops(w, prevSpace)
		if m == 0 {
			j += 8
			o += 8
			prevSpace = sp >> 56
			continue
		}
		k := bits.TrailingZeros64(m) >> 3
		j += k
		o += k
		if b := byteAt(s, j); b == 0x1B {
			e := csiEnd(s, j)
			if e < 0 {
				break
			}
			j = e
		} else if b >= 0xC2 {
			e := plainChars(s, j)
			if e == j {
				break
			}
			o = copyChars(out, o, s, j, e)
			j = e
		} else {
			break
		}
		// What follows is judged in the next chunk; o > 0 here, as
		// the first chunk takes at least its first byte.
		prevSpace = 0
		if byteAtB(out, o-1) == ' ' {
			prevSpace = 0x80
		}
	}
	return j, o
}

// reserve flushes the span and makes room in out for n more bytes, plus 8
// for an 8-byte store at the end. It returns out at full capacity and the
// output length.
func (c *cleaner[T]) reserve(n int) ([]byte, int) {
	if c.lo != c.hi {
		c.out = append(c.out, c.src[c.lo:c.hi]...)
		c.lo = c.hi
	}
	if cap(c.out)-len(c.out) < n+8 {
		c.out = slices.Grow(c.out, n+8)
	}
	return c.out[:cap(c.out)], len(c.out)
}

// copyChars copies s[j:k] to out[o:] and returns the new length of out.
// Room is reserved in out for the rest of s plus 8 bytes, so it copies in
// 8-byte stores while the loads stay inside s; that beats copy's call for
// the short words it mostly gets.
func copyChars[S text](out []byte, o int, s S, j, k int) int {
	n := k - j
	if k+8 > len(s) {
		return o + copy(out[o:], s[j:k])
	}
	for p := 0; p < n; p += 8 { // j+p+8 < k+8 <= len(s)
		store64(out, o+p, load64(s, j+p))
	}
	return o + n
}

// The hot loop reads and writes through these small helpers, with the
// ordinary bounds checks: the package uses no unsafe.

func byteAt[S text](s S, i int) byte { return s[i] }

// load64 reads s[i:i+8] as a little-endian word; the compiler turns the
// eight loads into one.
func load64[S text](s S, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func store64(b []byte, i int, v uint64) { binary.LittleEndian.PutUint64(b[i:i+8], v) }

func byteAtB(b []byte, i int) byte { return b[i] }

func store8(b []byte, i int, v byte) { b[i] = v }

// csiEnd returns the end of the complete CSI sequence (ESC [ parameters
// intermediates final) at s[j], which is ESC, or -1 if there is none. The
// common short sequence is found inline.
func csiEnd[S text](s S, j int) int {
	if j+18 <= len(s) && byteAt(s, j+1) == '[' {
		// Parameters and intermediates are 0x20-0x3F; x marks the bytes
		// outside, in the next 16 (SGR's "38;5;208" is 8).
		k := j + 2
		x := load64(s, k)&(0xE0*lsb) ^ 0x20*lsb
		if x == 0 {
			k += 8
			x = load64(s, k)&(0xE0*lsb) ^ 0x20*lsb
		}
		if x != 0 {
			k += bits.TrailingZeros64(x) >> 3
			if byteAt(s, k)-0x40 < 0x3F {
				return k + 1
			}
			return -1
		}
	}
	return csiEndSlow(s, j)
}

func csiEndSlow[S text](s S, j int) int {
	if j+1 >= len(s) || byteAt(s, j+1) != '[' {
		return -1
	}
	// Parameters and intermediates (0x20-0x3F), eight at a time where
	// possible.
	k := j + 2
	for {
		if k+8 > len(s) {
			for k < len(s) && byteAt(s, k)-0x20 < 0x20 {
				k++
			}
			break
		}
		if x := load64(s, k)&(0xE0*lsb) ^ 0x20*lsb; x != 0 {
			k += bits.TrailingZeros64(x) >> 3 // the first byte outside
			break
		}
		k += 8
	}
	if k < len(s) && byteAt(s, k)-0x40 < 0x3F { // the final byte
		return k + 1
	}
	return -1
}

// plainChars returns the end of the run of multi-byte characters with
// runProps that starts at s[k], or k if the first is not one. It stops
// early at a character whose table block is not built yet. It calls
// nothing, so that its loop runs in registers.
func plainChars[S text](s S, k int) int {
	var blk *[256]props
	hi := rune(-1) // the block blk is for
	for k < len(s) {
		b := byteAt(s, k)
		var r rune
		n := 0
		switch {
		case b < 0xC2:
			return k
		case b < 0xE0:
			if k+1 < len(s) {
				if b1 := byteAt(s, k+1); b1&0xC0 == 0x80 {
					r, n = rune(b&0x1F)<<6|rune(b1&0x3F), 2
				}
			}
		case b < 0xF0:
			if k+2 < len(s) {
				b1, b2 := byteAt(s, k+1), byteAt(s, k+2)
				r = rune(b&0x0F)<<12 | rune(b1&0x3F)<<6 | rune(b2&0x3F)
				if b1&0xC0 == 0x80 && b2&0xC0 == 0x80 && r >= 0x800 && r&0xF800 != 0xD800 {
					n = 3
				}
			}
		case b < 0xF5:
			if k+3 < len(s) {
				b1, b2, b3 := byteAt(s, k+1), byteAt(s, k+2), byteAt(s, k+3)
				r = rune(b&0x07)<<18 | rune(b1&0x3F)<<12 | rune(b2&0x3F)<<6 | rune(b3&0x3F)
				if b1&0xC0 == 0x80 && b2&0xC0 == 0x80 && b3&0xC0 == 0x80 && r >= 0x10000 && r <= 0x10FFFF {
					n = 4
				}
			}
		}
		if n == 0 || r>>8 != hi && r >= tableSize {
			return k
		}
		if r>>8 != hi {
			if blk = blocks[r>>8].Load(); blk == nil {
				return k
			}
			hi = r >> 8
		}
		if blk[r&0xFF]&runMask != runProps {
			return k
		}
		k += n
	}
	return k
}
