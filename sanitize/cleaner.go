package sanitize

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxMarks is the number of combining marks a grapheme cluster keeps: what
// a terminal cell holds (tmux draws about 10), and more than any script's
// real text needs. It is below the Stream-Safe Text
// Format limit of 30 (UAX #15) that norm enforces by inserting U+034F, so
// norm never does.
const maxMarks = 8

// cellBytes is how many bytes of UTF-8 a terminal cell holds: tmux 3.3a
// keeps at most 21 and drops what would pass them (see keep).
const cellBytes = 21

// maxNonStarters is that Stream-Safe Text Format limit of norm.
const maxNonStarters = 30

// What the last character written to the output was.
const (
	prevNone    uint8 = iota // nothing written yet
	prevVisible              // a kept character other than a space or joiner
	prevJoiner
)

// cleaner is the one-pass state machine behind Clean and Writer. It reads
// bytes, removes escape sequences and unwanted characters, and writes the
// kept characters to its output, normalizing each NFC segment as it closes.
// It can be fed in pieces: every state that spans input is a field.
//
// Until the first change, the output is the window src[lo:hi] of the input
// and nothing is copied (out is nil), which makes clean input free of
// allocations. After it, the output is out followed by the span src[lo:hi],
// which is extended while kept input is contiguous; textRun copies into out
// directly, in bulk.
type cleaner[T text] struct {
	limit int  // > 0: cut to this many UTF-16 units
	done  bool // the limit is certainly exceeded: the rest of the input is irrelevant

	esc     uint8 // escape-sequence state, see escape.go
	invalid bool  // the previous byte was part of an invalid UTF-8 sequence

	src    T          // the input being fed
	out    []byte     // the output, except the span
	lo, hi int        // the span: src[lo:hi] follows out
	mat    bool       // out is in use (the output is no longer just the span)
	pool   bool       // out comes from bufPool and goes back to it (Clean)
	tmp    []byte     // scratch for normalizing a segment
	it     *norm.Iter // normalizes a segment without allocating; made on first use

	units    int  // with a limit: UTF-16 units written (the open segment not yet normalized)
	seg      int  // output offset where the open NFC segment starts
	segUnits int  // units before seg
	dirty    bool // the open segment holds a character NFC may change

	ss    int  // marks in the current grapheme cluster (see keep)
	glue  bool // the next character continues the current cluster
	prev  uint8
	space bool // a space is pending: written only if a kept character follows
	spAt  int  // offset in src of the pending space if it is one ' ' byte, or -1

	runN  int     // pending joiners (3 means "3 or more")
	runOK bool    // the first pending joiner directly follows a visible character
	run   [2]rune // the first two pending joiners
	runAt [2]int  // their offsets in src, or -1

	// The context of the joiner rule, see joiner.go.
	jl     bool  // the last kept character that is not transparent joins to the left
	k1, k2 uint8 // emoji kinds of the last two kept items
	noLow  bool  // a ZWJ stands before a virama: no mark may sort before the virama

	nextVirama rune // the virama being kept, while keep judges the joiners before it

	// The bytes (of NFD) in the current terminal cell (see keep), and
	// whether the cell is the last character of a run, whose count keep
	// works out when it needs it.
	cb       int
	cbStale  bool
	spaceEnd bool // the pending joiners are ending for a space (spaceChar)
	afterNew bool // the output ends with the U+FFFD of a run of code points after the floor
}

// text is what the cleaner reads: a string (Clean) or the bytes handed to
// a Writer, read in place without a copy.
type text interface{ string | []byte }

// nfcAppend appends the NFC form of s to dst, with the iterator it.
func nfcAppend[S text](it *norm.Iter, dst []byte, s S) []byte {
	if out, ok := fastNFC(dst, s); ok {
		return out
	}
	if b, ok := any(s).([]byte); ok {
		it.Init(norm.NFC, b)
	} else {
		it.InitString(norm.NFC, string(s))
	}
	for !it.Done() {
		dst = append(dst, it.Next()...)
	}
	return dst
}

// head returns at most the first utf8.UTFMax bytes of s[i:] as a string,
// short enough for the compiler to convert on the stack.
func head[S text](s S, i int) string { return string(s[i:min(len(s), i+utf8.UTFMax)]) }

func (c *cleaner[T]) olen() int { return len(c.out) + c.hi - c.lo }

// materialize moves the output into out; from then on the span is appended
// to out whenever it cannot be extended.
func (c *cleaner[T]) materialize() {
	n := c.hi - c.lo
	want := len(c.src) - c.hi + n + 8
	if c.limit > 0 && c.limit < want/3 {
		// The output never grows much past the limit: 3 bytes per unit at
		// most, plus one open segment. (Compared by division, so that no
		// limit overflows.)
		want = 3*c.limit + 256
	}
	want = max(want, n+16)
	if c.out = nil; c.pool {
		c.out = pooledBuf(n, want)
	}
	if c.out == nil {
		c.out = make([]byte, n, want)
	}
	copy(c.out, c.src[c.lo:c.hi])
	c.lo = c.hi
	c.mat = true
}

// flushSpan appends the pending span to out.
func (c *cleaner[T]) flushSpan() {
	if !c.mat {
		c.materialize()
		return
	}
	c.out = append(c.out, c.src[c.lo:c.hi]...)
	c.lo = c.hi
}

// copySrc writes src[a:b]: it only extends the span when it can.
func (c *cleaner[T]) copySrc(a, b int) {
	if c.hi == a && c.lo != c.hi {
		c.hi = b
		return
	}
	c.newSpan(a, b)
}

func (c *cleaner[T]) newSpan(a, b int) {
	if c.lo != c.hi {
		c.flushSpan()
	}
	c.lo, c.hi = a, b
}

func (c *cleaner[T]) writeString(s string) {
	c.flushSpan()
	c.out = append(c.out, s...)
}

// boundary is called before a starter is written: it normalizes the open
// segment if needed, and stops the cleaner once the output is certainly
// longer than the limit. At that point the output so far is final (NFC
// cannot change it any more) and is all the cut needs.
func (c *cleaner[T]) boundary() bool {
	if c.dirty || c.limit > 0 {
		return c.boundarySlow()
	}
	c.seg, c.segUnits = c.olen(), c.units
	return true
}

func (c *cleaner[T]) boundarySlow() bool {
	if c.dirty {
		c.normalize()
	}
	if c.limit > 0 && c.units > c.limit {
		c.done = true
		return false
	}
	c.seg, c.segUnits = c.olen(), c.units
	return true
}

// normalize replaces the open segment with its NFC form.
func (c *cleaner[T]) normalize() {
	c.dirty = false
	// One pass of norm's iterator, which allocates nothing once it exists;
	// the result is compared with the segment rather than checked first
	// with IsNormal, which would normalize it twice.
	if c.it == nil {
		c.it = new(norm.Iter)
	}
	if n := len(c.out); c.seg >= n {
		seg := c.src[c.lo+c.seg-n : c.hi]
		if c.tmp = nfcAppend(c.it, c.tmp[:0], seg); string(c.tmp) == string(seg) {
			return
		}
		c.flushSpan()
	} else {
		c.flushSpan()
		if c.tmp = nfcAppend(c.it, c.tmp[:0], c.out[c.seg:]); string(c.tmp) == string(c.out[c.seg:]) {
			return
		}
	}
	c.out = append(c.out[:c.seg], c.tmp...)
	c.units = c.segUnits + units16(c.tmp)
}

// keep prepares the output for a kept character other than a space or a
// joiner, with properties p, and reports whether to write it. It is false
// for a mark beyond the cap of the grapheme cluster, and once done.
//
// A text starts with a base: a combining mark (General_Category M) or a
// Hangul V or T is removed while nothing has been written, since it would
// join the character before the text (a frame's ": " or quote). What
// draws a cell of its own though UAX #29 calls it Extend (a skin tone,
// halfwidth katakana's sound marks U+FF9E and U+FF9F) is kept.
//
// The mark count: a grapheme cluster keeps at most maxMarks marks, each
// character counting the marks of its full decomposition (marksOf; Hangul
// jamo are letters and count none). The count restarts only at a
// character that certainly starts a new cluster: a starter that is not a
// mark, Extend, SpacingMark or Hangul V/T, and does not follow a Prepend
// character, a Hangul L, a virama or a kept ZWJ (GB9b, GB6, GB9c and GB11
// of UAX #29); a Hangul V or T ends what an L glued (a letter after it
// starts a syllable of its own). Joiners and removed characters never
// restart it.
func (c *cleaner[T]) keep(p props, n int) bool {
	// A mark of class 1-8 directly after a virama that a kept ZWJ stands
	// before would sort before the virama; not after a space or a joiner
	// that will be written (a starter between them keeps the order), so
	// the decision is the same on a second pass.
	if c.noLow && p.has(propLowCCC) && !c.space && !(c.runN > 0 && c.runKeeps(p, true) != [2]bool{}) {
		return false
	}
	if c.prev == prevNone && p.has(propMark|propJamoVT) {
		return false // a text starts with a base
	}
	if p.has(propKhitanFiller) && !c.afterKhitan() {
		return false
	}
	base := p.starter() && !p.has(propCont)
	add := p.marks()
	// Decided before pending joiners are written, so that a dropped
	// character leaves them pending; a pending joiner may glue.
	if (!base || c.glue || c.runN > 0 && c.runGlues(p)) && !c.space && c.ss+add > maxMarks {
		return false
	}
	// The terminal cell's bytes: a character that takes a cell starts
	// one (unless a kept ZWJ joins it to the one before; a spacing mark
	// counts with its base, a skin tone starts its own, as in tmux), the
	// rest go into the current one, and a mark that would take the cell
	// past cellBytes (pending joiners counted if they would be kept) is
	// removed. Each character counts the bytes of its NFD form: NFC only
	// ever shrinks a cell, and NFD is the same on a second pass, which so
	// keeps what the first kept.
	newCell := !p.has(propZeroWidth) && (!p.has(propCont) || p.has(propEmojiMod)) && (c.k1 != kZWJ || c.space) &&
		!(c.runN > 0 && !c.space && c.runGlues(p))
	w := p.nfdBytes()
	if !newCell {
		cb := c.cell()
		if c.space {
			cb = c.spaceCell()
		}
		if !base && cb+w+3*c.runN > cellBytes && (c.runN == 0 || cb+w+3*c.runKept(p) > cellBytes) {
			return false
		}
	}
	if c.runN > 0 && !c.endRun(p, true) {
		return false
	}
	if c.space && !c.writeSpace() {
		return false
	}
	if p.starter() {
		if !c.boundary() {
			return false
		}
		c.noLow = false
	}
	if base && !c.glue {
		c.ss = add
	} else {
		c.ss += add
	}
	if newCell {
		c.cb, c.cbStale = w, false
	} else {
		c.cb += w
	}
	switch {
	case base:
		c.glue = p.has(propGlue)
	case p.has(propGlue):
		c.glue = true
	case p.has(propJamoVT):
		c.glue = false // L V and L V T are whole: a letter after them starts anew
	}
	c.kept(p)
	if !p.stable() {
		c.dirty = true
	}
	c.prev = prevVisible
	c.afterNew = false
	return true
}

// afterKhitan reports whether the output ends with a Khitan Small Script
// character, directly: the only place its filler is kept.
func (c *cleaner[T]) afterKhitan() bool {
	return c.prev == prevVisible && !c.space && c.runN == 0 && lookup(c.lastRune()).has(propKhitan)
}

// keepRune writes the kept character src[a:b].
func (c *cleaner[T]) keepRune(p props, a, b int) {
	if p.has(propVirama) {
		c.nextVirama, _ = decode(c.src, a)
	}
	if c.keep(p, b-a) {
		c.copySrc(a, b)
		c.units += 1 + (b-a)>>2 // 4-byte characters are surrogate pairs
	}
}

// replacementProps are the properties of U+FFFD that keep uses.
const replacementProps = plain | 3<<33 // NFD: itself, 3 bytes

// replacement writes U+FFFD for an invalid byte sequence.
func (c *cleaner[T]) replacement() {
	if c.keep(replacementProps, 3) {
		c.writeString("\uFFFD")
		c.units++
	}
}

// afterFloor handles a code point assigned after DisplayFloor: each
// maximal run of them (removed characters and pending joiners between
// them do not end it) becomes one U+FFFD.
func (c *cleaner[T]) afterFloor() {
	if c.afterNew && !c.space {
		return
	}
	if c.keep(replacementProps, 3) {
		c.writeString("\uFFFD")
		c.units++
		c.afterNew = true
	}
}

// spaceChar handles a whitespace character at input offset at (-1 unless it
// is a single ' ' byte): spaces collapse, and leading and trailing ones go.
func (c *cleaner[T]) spaceChar(at int) {
	if c.runN > 0 {
		c.spaceEnd = true
		ok := c.endRun(0, false)
		c.spaceEnd = false
		if !ok {
			return
		}
	}
	if c.prev == prevNone || c.space {
		return
	}
	c.space, c.spAt = true, at
}

func (c *cleaner[T]) writeSpace() bool {
	c.space = false
	if !c.boundary() {
		return false
	}
	if c.spAt >= 0 {
		c.copySrc(c.spAt, c.spAt+1)
	} else {
		c.writeString(" ")
	}
	c.units++
	c.ss, c.glue, c.noLow, c.afterNew = 0, false, false, false
	c.cb, c.cbStale = c.spaceCell(), false
	c.jl, c.k2, c.k1 = false, c.k1, kOther
	return true
}

// spaceCell is the bytes of the cell a pending space goes into: its own,
// or, after a kept ZWJ, the ZWJ's, as tmux draws whatever follows a ZWJ
// in the cell before it.
func (c *cleaner[T]) spaceCell() int {
	if c.k1 == kZWJ {
		return c.cell() + 1
	}
	return 1
}

// finish ends the text: pending joiners are resolved, a pending space is
// dropped and the last segment is normalized.
func (c *cleaner[T]) finish() {
	if c.done {
		return
	}
	if c.runN > 0 && !c.endRun(0, false) {
		return
	}
	c.space = false
	if c.dirty {
		c.normalize()
	}
	c.seg, c.segUnits = c.olen(), c.units
}

// result returns the finished text, cut to the limit.
func (c *cleaner[T]) result() string {
	var x string
	if c.mat {
		c.flushSpan()
		// A copy: out is reused (by a Writer) or may be, and a string
		// handed out must never change.
		x = string(c.out)
	} else {
		x = string(c.src[c.lo:c.hi]) // T is string here: Writer output is materialized
	}
	if c.limit > 0 && c.units > c.limit {
		return cut(x, c.limit, c.units)
	}
	return x
}
