package sanitize

import (
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
	c.afterNew, c.cbStale = false, true
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
	var out []byte // once materialized: c.out, with room for the run
	if mat {
		out = c.reserve(end - i)
	} else if c.lo == c.hi {
		c.lo, c.hi = i, i
	}
	start := c.olen()
	full := s
	s = s[:end]
	j := i
	// With a limit: the output of the run up to byte counted, and its
	// units. The run goes on past end while the limit is not passed, so
	// that a text of multi-byte characters is read in a few steps, not
	// in one run per halving of the room.
	counted, units := 0, 0
loop:
	for {
		if j == len(s) {
			if len(s) == len(full) {
				break
			}
			if mat {
				units += units16(out[start+counted:])
				counted = len(out) - start
			} else {
				units += units16(s[i+counted : j])
				counted = j - i
			}
			room := c.limit - c.units - units
			if room < 0 {
				break
			}
			if room < len(full)-j {
				end = j + max(room+1, utf8.UTFMax)
				end = min(end, len(full))
			} else {
				end = len(full)
			}
			s = full[:end]
			if mat && cap(out)-len(out) < end-j+8 {
				out = slices.Grow(out, end-j+8)
			}
			continue
		}
		b := byteAt(s, j)
		switch {
		case b-0x20 < 0x5F: // printable ASCII or a space
			// A space after a space ends the run, also across a removed
			// CSI (which materializes the output). The run starts with a
			// non-space.
			if b == ' ' && (mat && len(out) > start && out[len(out)-1] == ' ' || !mat && j > i && byteAt(s, j-1) == ' ') {
				break loop
			}
			if j+9 > len(s) {
				break // one byte, below (copyPlain reads 9)
			}
			// Eight bytes at a time while all are plain; this one is,
			// so at least one is taken. It is not a space after a space.
			if mat {
				out, j = copyPlain(out, s, j)
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
				out = c.reserve(len(s) - k)
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
				out = append(out, s[j:k]...)
			}
			j = k
			continue
		}
		// A single ASCII byte.
		if mat {
			out = append(out, b)
		}
		j++
	}
	spaceEnd := mat && len(out) > start && out[len(out)-1] == ' ' || !mat && j > i && byteAt(s, j-1) == ' '
	if mat {
		c.out = out
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
	if n := c.olen() - start; counted > n {
		counted, units = n, units-1 // the space given back was counted
	}
	// The open segment is the last character: a mark may still follow.
	if mat {
		runTail(c, c.out[start:], start, counted, units)
	} else {
		runTail(c, c.src[c.lo+start:c.hi], start, counted, units)
	}
	return j
}

// runTail sets the state after a text run whose output x was written at
// output offset start: the open segment is its last character, since a
// mark may still follow.
func runTail[T, X text](c *cleaner[T], x X, start, counted, units int) {
	last := len(x) - 1
	for x[last] >= 0x80 && x[last] < 0xC0 {
		last--
	}
	c.ss = 0
	var p props
	if x[last] >= 0x80 {
		r, _ := utf8.DecodeRuneInString(head(x, last))
		p = lookup(r)
		c.ss = p.marks()
	}
	c.prev = prevVisible
	// Every character of a run starts its own cluster and is not
	// transparent, but for a skin tone after an Extended_Pictographic
	// character (toneAfterPict); only the last one is the joiners'
	// context.
	c.glue, c.noLow = false, false
	c.jl, c.k2, c.k1 = p.has(propJoinsLeft), kOther, kOther
	switch {
	case p.has(propExtPict):
		c.k1 = kExt
	case p.has(propEmojiMod):
		// The cluster holds the pictograph, whose trailing marks count
		// too, and the tone, which counts one.
		c.ss += lookup(lastRuneOf(x[:last])).marks() // (c.ss holds the tone's one)
		c.k2, c.k1 = kExt, kElem
	}
	c.seg = start + last
	if c.limit > 0 {
		// The first counted bytes are known to hold units units.
		units += units16(x[counted:])
		c.segUnits = c.units + units - units16(x[last:])
		c.units += units
	}
}

// reserve flushes the span and makes room in out for n more bytes, plus 8
// for an 8-byte store at the end, and returns out.
func (c *cleaner[T]) reserve(n int) []byte {
	if c.lo != c.hi {
		c.out = append(c.out, c.src[c.lo:c.hi]...)
		c.lo = c.hi
	}
	if cap(c.out)-len(c.out) < n+8 {
		c.out = slices.Grow(c.out, n+8)
	}
	return c.out
}

// cell returns the bytes in the current terminal cell, working them out
// when the cell is the last character of a run (textRun leaves it
// stale: most runs never need it).
func (c *cleaner[T]) cell() int {
	if c.cbStale {
		c.cb, c.cbStale = lookup(c.lastRune()).nfdBytes(), false
	}
	return c.cb
}
