package sanitize

import (
	"encoding/binary"
	"math/bits"
)

// The bulk scanners of a text run (textRun in run.go): plain ASCII in
// words, the copying loop, multi-byte characters against the bitmaps of
// tables.go, and short CSI sequences. They are leaves that keep their
// state in registers, and read through bounds-checked helpers (the package
// uses no unsafe).

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
// 32 bytes a step, then eight: it stops at the first byte it does not take
// or with fewer than eight bytes left.
func scanPlain[S text](s S, j int) int {
	// 32 bytes at a time while none stops the run; s[j] is taken, so the
	// pair s[j-1], s[j] needs no check. In each word w (eight bytes) and
	// v (the same, one byte on), x = w - 0x20 in each byte is below 0x5F
	// for printable ASCII, so x | x+0x21 has the top bit set where a byte
	// is not; x|y is zero where both w and v hold a space, and subtracting
	// one sets its top bit. A borrow or carry between bytes only comes
	// from a byte that is already caught. All terms go into one mask,
	// tested once; a non-printable s[j+32] (read for the last pair) only
	// sends the chunk to the exact loop below.
	const c20, c21 = 0x20 * lsb, 0x21 * lsb
	for j+33 <= len(s) {
		c := s[j : j+33]
		x0, y0 := load64(c, 0)-c20, load64(c, 1)-c20
		x1, y1 := load64(c, 8)-c20, load64(c, 9)-c20
		x2, y2 := load64(c, 16)-c20, load64(c, 17)-c20
		x3, y3 := load64(c, 24)-c20, load64(c, 25)-c20
		m := x0 | (x0 + c21) | ((x0 | y0) - lsb)
		m |= x1 | (x1 + c21) | ((x1 | y1) - lsb)
		m |= x2 | (x2 + c21) | ((x2 | y2) - lsb)
		m |= x3 | (x3 + c21) | ((x3 | y3) - lsb)
		if m&msb != 0 {
			break
		}
		j += 32
	}
	var prevSpace uint64
	if j > 0 && byteAt(s, j-1) == ' ' {
		prevSpace = 0x80
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

// copyPlain is scanPlain once the output is materialized: it appends to
// out, which has room for the rest of s plus 8 bytes (so that it never
// grows), and returns it and where it stopped in s. It also goes through
// complete CSI sequences of up to 16 parameter bytes, which it removes,
// and words in other scripts, which it copies: they are the common
// interruptions, and going round textRun's switch (or even calling a
// function) for each costs more than the work itself. It calls nothing
// but toneAfterPict, for a skin tone, so that its loop keeps its state in
// registers.
//
// Each chunk of eight bytes is appended whole, then cut back to what is
// taken. It is checked as in scanPlain: x | x+0x21 marks the bytes that
// are not printable ASCII exactly up to the first, and (x|y)-1 marks a
// byte that is followed by a space after a space, or by a byte that is
// not printable: in both cases it is the next byte that stops the run.
func copyPlain[S text](out []byte, s S, j int) ([]byte, int) {
	const c20 = 0x20 * lsb
	for j+9 <= len(s) {
		c := s[j : j+9]
		w := load64(c, 0)
		out = binary.LittleEndian.AppendUint64(out, w)
		x := w - c20
		bad := x | (w + lsb) // w + lsb is x + 0x21
		y := load64(c, 1) - c20
		m := (bad | ((x | y) - lsb)) & msb
		if m == 0 {
			j += 8
			continue
		}
		// (The masks let the compiler drop most index checks on c and q.)
		k := bits.TrailingZeros64(m) >> 3 & 7
		if bad&(m&-m) == 0 {
			k++ // the stop is the byte after the one marked
		}
		b := byteAt(c, k)
		j += k
		out = out[:len(out)-8+k]
		if b == 0x1B {
			// A CSI sequence: parameters and intermediates (0x20-0x3F),
			// then a final byte (0x40-0x7E). x marks the bytes outside
			// the first range, in the next 8 and, if need be, 8 more.
			if j+20 > len(s) {
				break
			}
			q := s[j : j+20]
			if byteAt(q, 1) != '[' {
				break
			}
			e := 2
			x := load64(q, 2)&(0xE0*lsb) ^ c20
			if x == 0 {
				e = 10
				if x = load64(q, 10)&(0xE0*lsb) ^ c20; x == 0 {
					break // a long one: textRun decides
				}
			}
			e += bits.TrailingZeros64(x) >> 3 & 7
			if byteAt(q, e)-0x40 >= 0x3F {
				break // not complete: textRun decides
			}
			j += e + 1
			// A space after the sequence, after a space before it,
			// ends the run (the chunks only check pairs inside them).
			// (One test of both: whether a space follows is a coin toss
			// that a branch predictor loses half the time.)
			if n := len(out) - 1; n >= 0 && (byteAt(q, e+1)^' ')|(out[n]^' ') == 0 {
				break
			}
			continue
		}
		if b < 0xC2 {
			break
		}
		// Characters in other scripts, checked as in plainChars (a
		// space ends them here: the chunks take it), then copied.
		j0 := j
		for j+4 <= len(s) {
			w := load32(s, j)
			if w&0x80 == 0 {
				break // ASCII, mostly the space after a word
			}
			n := plainLenBMP(w)
			if n == 0 {
				if n = plainLen1(w); n == 0 && !(j > j0 && toneAfterPict(w, s[j0:j])) {
					break
				}
				n = 4
			}
			j += n
		}
		if j == j0 {
			break // not plain, or near the end: textRun decides
		}
		// Appended eight bytes at a time while the loads stay inside s,
		// then cut back.
		if j-j0 <= 16 && j0+16 <= len(s) {
			// Most words: two stores whatever their length, rather
			// than a loop whose count the branch predictor misses.
			n := len(out) + j - j0
			out = binary.LittleEndian.AppendUint64(out, load64(s, j0))
			out = binary.LittleEndian.AppendUint64(out, load64(s, j0+8))
			out = out[:n]
		} else if j+8 > len(s) {
			out = append(out, s[j0:j]...)
		} else {
			n := len(out) + j - j0
			for p := j0; p < j; p += 8 {
				out = binary.LittleEndian.AppendUint64(out, load64(s, p))
			}
			out = out[:n]
		}
		if j < len(s) && byteAt(s, j) >= 0x80 {
			break // not plain: textRun decides
		}
	}
	return out, j
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

// toneAfterPict reports whether w (four bytes of input, little-endian) is
// a skin-tone modifier and the last of the characters before it, which a
// run takes, is Extended_Pictographic (👍🏽): the pair is one grapheme
// cluster with one mark, which runTail accounts for, and the modifier has
// no other effect. It is a call, but a rare one.
func toneAfterPict[S text](w uint32, before S) bool {
	if w&0xFFFFFF != 0x8F9FF0 || w>>24-0xBB >= 5 { // F0 9F 8F BB-BF: U+1F3FB-U+1F3FF
		return false
	}
	if n := len(before); n >= 4 {
		// Mostly a pictograph of plane 1, decoded here.
		if v := load32(before, n-4); v&0xC0C0F0FF == 0x808090F0 {
			r := 0x10000 | rune(v>>8&0x0F)<<12 | rune(v>>16&0x3F)<<6 | rune(v>>24&0x3F)
			return lookup(r).has(propExtPict)
		}
	}
	return lookup(lastRuneOf(before)).has(propExtPict)
}

// load32 reads s[i:i+4] as a little-endian word.
func load32[S text](s S, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

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

// twoByteRun returns the end of the 2-byte characters a text run takes,
// and single spaces between them, from s[k] (the letters of Cyrillic,
// Greek, Hebrew, Arabic, ...): eight bytes a step while they are four such
// characters, then two characters, then one, then a space before another
// multi-byte character. Each character is looked up by its two bytes as
// they stand in the input, in plainLane, so that no code point is
// assembled, no bitmap shifted and no UTF-8 pattern checked. It is a leaf
// with few registers live, so that its loops spill nothing. A space it
// takes may end the run, as in plainChars.
func twoByteRun[S text](s S, k int) int {
	k0 := k
	for {
		for k+8 <= len(s) {
			w := load64(s, k)
			if plainLane[uint16(w)].Load()&plainLane[uint16(w>>16)].Load()&
				plainLane[uint16(w>>32)].Load()&plainLane[uint16(w>>48)].Load() == 0 {
				break
			}
			k += 8
		}
		for k+2 <= len(s) && plainLane[uint16(s[k])|uint16(s[k+1])<<8].Load() != 0 {
			k += 2
		}
		// A space after a character, before a multi-byte one.
		if k == k0 || k+2 > len(s) || s[k] != ' ' || s[k+1] < 0xC2 {
			return k
		}
		k++
	}
}

// plainChars returns the end of the run of multi-byte characters with
// runProps, and single spaces between them, that starts at s[k], or k if
// the first is not one. It stops early at a character whose table block
// is not built yet. It calls nothing but toneAfterPict, so that its loop
// runs in registers. A space it takes may end the run (if what follows is
// not plain), which textRun's trailing space handles.
func plainChars[S text](s S, k int) int {
	var blk *[256]props
	hi := rune(-1) // the block blk is for
	k0 := k
	for k+4 <= len(s) {
		// The 2-byte characters (and single spaces between them) in a
		// leaf that takes them a word at a time, where two of them
		// follow (a lone é in an ASCII word is not worth the call),
		// otherwise one character.
		w := load32(s, k)
		if w&0xC0E0C0E0 == 0x80C080C0 {
			if k2 := twoByteRun(s, k); k2 != k {
				k = k2
				continue
			}
		}
		if n := plainLenBMP(w); n != 0 {
			k += n
			continue
		}
		if n := plainLen1(w); n != 0 {
			k += n
			continue
		}
		// A space after a character of the run and before a multi-byte
		// character (plain or not: if not, the run ends with the space),
		// or a skin tone after a pictograph.
		if k > k0 && w&0xFF == ' ' && w>>8&0xFF >= 0xC2 {
			k++
			continue
		}
		if k > k0 && toneAfterPict(w, s[k0:k]) {
			k += 4
			continue
		}
		return k
	}
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
