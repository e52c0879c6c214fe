package sanitize

//go:generate go run ./internal/ucdgen -dir testdata/ucd/15.0.0 -out ucd_tables.go

import (
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// props packs what the cleaner needs to know about one code point into a
// word, so that the hot loop does a single table load per character:
//
//	bits 0-1  kind: keep, remove, space or joiner (the four invisibles)
//	bit  2    stable: NFC leaves it alone whatever follows (NFC_QC=Yes, ccc 0,
//	          does not combine backward)
//	bit  3    starter: an NFC segment starts here (norm's BoundaryBefore)
//	bits 4-5  leading non-starters, in norm's stream-safe counting
//	bits 6-7  trailing non-starters, in norm's stream-safe counting
//	bits 8-   the contexts of the joiner rule and the grapheme-cluster mark
//	          count, below (bits 24-31: the combining class)
type props uint64

const (
	kindKeep   props = 0
	kindRemove props = 1
	kindSpace  props = 2
	kindJoiner props = 3 // U+200C, U+200D, U+FE0E, U+FE0F
	kindMask   props = 3

	propStable  props = 1 << 2
	propStarter props = 1 << 3

	propExtPict   props = 1 << 8  // Extended_Pictographic: an emoji ZWJ sequence element
	propEmojiMod  props = 1 << 9  // a skin-tone modifier
	propVirama    props = 1 << 10 // Canonical_Combining_Class 9
	propLowCCC    props = 1 << 11 // Canonical_Combining_Class 1-8: sorts before a virama
	propJoinsLeft props = 1 << 12 // Joining_Type L or D
	propJoinsRt   props = 1 << 13 // Joining_Type R or D
	propTransp    props = 1 << 14 // Joining_Type T, or a non-starter: skipped when looking for a joining letter
	propTextVS    props = 1 << 15 // has a variation sequence with U+FE0E
	propEmojiVS   props = 1 << 16 // has a variation sequence with U+FE0F
	propKeycap    props = 1 << 17 // # * 0-9: U+FE0F only before U+20E3, U+FE0E never
	propKeycapEnd props = 1 << 18 // U+20E3 COMBINING ENCLOSING KEYCAP

	// The grapheme-cluster mark count (see cleaner.keep).
	propCont   props = 1 << 19 // never starts a cluster: a mark, Extend, SpacingMark, Hangul V or T
	propJamoVT props = 1 << 20 // a Hangul vowel or final jamo: a letter, and what follows it needs no glue
	propGlue   props = 1 << 21 // what follows continues the cluster: Prepend, Hangul L, virama

	propAfterFloor props = 1 << 22 // assigned after DisplayFloor (kind remove): a run of them becomes U+FFFD

	propNoDecomp props = 1 << 23 // no canonical decomposition (the fast NFC path, nfc.go)
	// bits 24-31: Canonical_Combining_Class

	propZeroWidth props = 1 << 32 // takes no cell of its own (Width): it goes into the cell before it
	// bits 33-37: the length of its NFD form in UTF-8 (see cleaner.keep)
	// bits 38-41: the marks it counts for (see marksOf)

	propKhitan       props = 1 << 42 // a Khitan Small Script character other than the filler
	propKhitanFiller props = 1 << 43 // U+16FE4 KHITAN SMALL SCRIPT FILLER: kept only after Khitan
	propMark         props = 1 << 44 // General_Category M: a combining mark, never the start of a text

	// plain is the common case: a kept, NFC-stable starter with no
	// non-starters in its decomposition.
	plain = kindKeep | propStable | propStarter
)

func (p props) kind() props      { return p & kindMask }
func (p props) stable() bool     { return p&propStable != 0 }
func (p props) starter() bool    { return p&propStarter != 0 }
func (p props) lead() int        { return int(p>>4) & 3 }
func (p props) trail() int       { return int(p>>6) & 3 }
func (p props) has(q props) bool { return p&q != 0 }
func (p props) ccc() uint8       { return uint8(p >> 24) }
func (p props) nfdBytes() int    { return int(p>>33) & 31 }
func (p props) marks() int       { return int(p>>38) & 15 }

// The properties of planes 0-3 (the BMP, plane 1's emoji and historic
// scripts, the CJK extensions B-H of planes 2 and 3) are kept in 256-entry
// blocks built on first use, so that a program pays only for the scripts
// it meets (about 20µs a block); higher code points (tags, selectors,
// private use) are classified on the fly, which is rare enough not to
// matter. Everything is derived from the unicode and norm packages linked
// into the program and the generated tables, so it always agrees with the
// NFC implementation used.
const tableSize = 0x40000

var (
	blocks   [tableSize >> 8]atomic.Pointer[[256]props]
	blocksMu sync.Mutex
)

// plain2, plain3 and plain4 say which characters of 2, 3 and 4 bytes (the
// last only in plane 1) a text run takes (runProps, see run.go), indexed
// by their UTF-8 form so that a run tests a character without assembling
// its code point: bit b1&0x3F of plain2[b0&0x1F] is for the character
// b0 b1, bit b2&0x3F of plain3[(b0&0x0F)<<6|b1&0x3F] for b0 b1 b2, and bit
// b3&0x3F of plain4[(b1&0x3F)<<6|b2&0x3F] for F0 b1 b2 b3 (b1 90-BF:
// planes 1-3; the index is the code point shifted right by 6). A bit
// is set when the block of its character is built, so a clear bit means
// "not plain, or not known yet" and the caller takes the slow path, which
// builds the block. Bits are set only for the code points the form
// encodes (U+0080-U+07FF; U+0800-U+FFFF less the surrogates, which are
// removed; U+10000-U+3FFFF), so an overlong form (F0 8x) or a surrogate
// never finds one.
//
// plainLane is plain2 indexed by a 2-byte character's bytes as a
// little-endian 16-bit number (b0 | b1<<8), 1 if a run takes it: any
// other pair of bytes, an ASCII byte or a 3-byte character's among them,
// finds 0. twoByteRun looks up four characters of a word at once with it.
// (256 KiB of address space, of which the 2-byte characters touch 64 KiB.)
var (
	plainLane [1 << 16]atomic.Uint32
	plain2    [1 << 5]atomic.Uint64
	plain3    [1 << 10]atomic.Uint64
	plain4    [1 << 12]atomic.Uint64
)

// plainLen returns the length of the character whose UTF-8 form w starts
// with (four bytes of input, little-endian), if a text run takes it and
// it is not ASCII, or 0. It is written as two functions that each get
// inlined: callers write plainLenBMP(w), then plainLen1(w) if that is 0.
func plainLen1(w uint32) int {
	if w&0xC0C0C0FF == 0x808080F0 { // 11110000 10xxxxxx 10xxxxxx 10xxxxxx
		return int(plain4[(w>>8&0x3F)<<6|w>>16&0x3F].Load()>>(w>>24&0x3F)&1) * 4
	}
	return 0
}

func plainLenBMP(w uint32) int {
	if w&0xC0E0 == 0x80C0 { // 110xxxxx 10xxxxxx
		return int(plain2[w&0x1F].Load()>>(w>>8&0x3F)&1) * 2
	}
	if w&0xC0C0F0 == 0x8080E0 { // 1110xxxx 10xxxxxx 10xxxxxx
		return int(plain3[(w&0x0F)<<6|w>>8&0x3F].Load()>>(w>>16&0x3F)&1) * 3
	}
	return 0
}

func lookup(r rune) props {
	if r < tableSize {
		if b := blocks[r>>8].Load(); b != nil {
			return b[r&0xFF]
		}
	}
	return lookupSlow(r)
}

func lookupSlow(r rune) props {
	if r < tableSize {
		return buildBlock(r >> 8)[r&0xFF]
	}
	return classify(r)
}

func buildBlock(i rune) *[256]props {
	blocksMu.Lock()
	defer blocksMu.Unlock()
	if b := blocks[i].Load(); b != nil {
		return b
	}
	b := new([256]props)
	for k := range rune(256) {
		r := i<<8 | k
		b[k] = classify(r)
		if b[k]&runMask != runProps {
			continue
		}
		switch {
		case 0x80 <= r && r < 0x800:
			plain2[r>>6].Or(1 << (r & 63))
			plainLane[0xC0|r>>6|(0x80|r&0x3F)<<8].Store(1)
		case 0x800 <= r && r < 0x10000:
			plain3[r>>6].Or(1 << (r & 63))
		case 0x10000 <= r && r < 0x40000:
			plain4[r>>6].Or(1 << (r & 63))
		}
	}
	blocks[i].Store(b)
	return b
}

// classify computes the properties of r from the Unicode tables. See the
// package documentation for the policy.
func classify(r rune) props {
	p := kindOf(r) | normProps(r)
	return p | contextProps(r, p)
}

func kindOf(r rune) props {
	if k := removedKind(r); k != kindKeep {
		return k
	}
	switch {
	case unicode.Is(afterFloor, r):
		// Assigned after DisplayFloor: a terminal of the floor's
		// generation draws it as nothing (docs/sanitizer.md).
		return kindRemove | propAfterFloor
	case !unicode.Is(displayable, r):
		// Unassigned (DerivedAge has no age for it), the code points
		// reserved for emoji included: a terminal draws them as nothing.
		return kindRemove
	}
	return kindKeep
}

// removedKind classifies r by the rules that hold whatever its age: the
// invisibles, whitespace and the removed categories.
func removedKind(r rune) props {
	switch {
	case r == 0x200C || r == 0x200D || r == 0xFE0E || r == 0xFE0F:
		return kindJoiner
	case unicode.IsSpace(r), r == 0x2800: // U+2800 BRAILLE PATTERN BLANK draws as a space
		return kindSpace
	case r < 0x20 || 0x7F <= r && r < 0xA0, // C0, DEL, C1 (U+0085 is a space)
		0xD800 <= r && r <= 0xDFFF, // surrogates never decode, but be total
		unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Co, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Noncharacter_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r):
		return kindRemove
	}
	return kindKeep
}

// contextProps derives the joiner-rule and cluster bits of r, whose kind
// and normalization bits are p.
func contextProps(r rune, p props) props {
	var q props
	set := func(bit props, ok bool) {
		if ok {
			q |= bit
		}
	}
	ccc := cccOf(r)
	set(propExtPict, unicode.Is(extPict, r))
	set(propEmojiMod, unicode.Is(emojiModifier, r))
	set(propVirama, ccc == 9)
	set(propLowCCC, ccc > 0 && ccc < 9)
	set(propJoinsLeft, unicode.Is(joinsLeft, r))
	set(propJoinsRt, unicode.Is(joinsRight, r))
	set(propTransp, unicode.Is(joinTransparent, r) || !p.starter())
	set(propTextVS, unicode.Is(textVariation, r))
	set(propEmojiVS, unicode.Is(emojiVariation, r))
	set(propKeycap, r == '#' || r == '*' || '0' <= r && r <= '9')
	set(propKeycapEnd, r == 0x20E3)
	set(propZeroWidth, cells(r) == 0)
	if p.kind() != kindKeep {
		return q
	}
	mark := unicode.Is(unicode.M, r) || unicode.Is(gcbExtend, r)
	cont := mark || unicode.Is(gcbVT, r) || !p.starter()
	set(propCont, cont)
	set(propJamoVT, unicode.Is(gcbVT, r))
	set(propMark, unicode.Is(unicode.M, r))
	set(propGlue, ccc == 9 || unicode.Is(gcbPrepend, r) || unicode.Is(gcbL, r))
	set(propKhitanFiller, r == khitanFiller)
	set(propKhitan, r != khitanFiller && unicode.Is(unicode.Khitan_Small_Script, r))
	return q | props(marksOf(r))<<38
}

// khitanFiller is U+16FE4 KHITAN SMALL SCRIPT FILLER, which a terminal
// stores zero-width: it is kept only directly after a Khitan Small Script
// character (after a Latin letter it would ride undrawn).
const khitanFiller = 0x16FE4

// marksOf returns how many combining marks r counts for in a grapheme
// cluster: the code points of its full compatibility decomposition (NFKD)
// that norm counts as non-starters or that are marks or Extend of class 0
// (enclosing marks, spacing marks, skin tones), but no Hangul jamo, which
// are letters. Counted on the full decomposition, the sum over a text is
// the same for the text and its NFC form (\u0fac counts the two marks of
// \u0fab\u0fb7 it becomes), so a second pass keeps every mark the first
// kept; and it is never below norm's own count of non-starters, which so
// never reaches its Stream-Safe limit inside a cluster.
func marksOf(r rune) int {
	var buf [utf8.UTFMax]byte
	b := buf[:utf8.EncodeRune(buf[:], r)]
	d := norm.NFKD.Properties(b).Decomposition()
	if d == nil {
		d = b
	}
	n := 0
	for i := 0; i < len(d); {
		c, size := utf8.DecodeRune(d[i:])
		i += size
		if isJamo(c) {
			continue
		}
		if !norm.NFKC.Properties(d[i-size:]).BoundaryBefore() || unicode.Is(unicode.M, c) || unicode.Is(gcbExtend, c) {
			n++
		}
	}
	return min(n, 15)
}

// isJamo reports whether r is a conjoining Hangul jamo (L, V or T).
func isJamo(r rune) bool {
	return 0x1100 <= r && r <= 0x11FF || 0xA960 <= r && r <= 0xA97F || 0xD7B0 <= r && r <= 0xD7FF
}

func cccOf(r rune) uint8 {
	var buf [utf8.UTFMax]byte
	return norm.NFC.Properties(buf[:utf8.EncodeRune(buf[:], r)]).CCC()
}

// normProps derives the normalization bits of r from the public norm API.
// The non-starter counts follow norm's Stream-Safe Text Format accounting:
// code points in r's compatibility decomposition that have a non-zero
// combining class or combine backward, counted from the front and from the
// back; a precomposed Hangul syllable trails its vowel (and final) jamo.
// Keeping every run of these at most 30 means norm never inserts a U+034F
// COMBINING GRAPHEME JOINER, which the cleaner would remove on a second pass.
func normProps(r rune) props {
	var buf [utf8.UTFMax]byte
	b := buf[:utf8.EncodeRune(buf[:], r)]
	var p props
	nfc := norm.NFC.Properties(b)
	if nfc.BoundaryBefore() {
		p |= propStarter
		// (A copy, so that buf does not escape for every code point.)
		if nfc.Decomposition() == nil || norm.NFC.IsNormal(append([]byte(nil), b...)) {
			p |= propStable
		}
	}
	n := len(b)
	if d := norm.NFD.Properties(b).Decomposition(); d == nil {
		p |= propNoDecomp
	} else {
		n = len(d)
	}
	p |= props(min(n, 31)) << 33
	p |= props(nfc.CCC()) << 24
	lead, trail := nonStarters(r, b)
	return p | props(lead)<<4 | props(trail)<<6
}

func nonStarters(r rune, b []byte) (lead, trail int) {
	const hangulBase, hangulEnd, jamoTCount = 0xAC00, 0xD7A4, 28
	if hangulBase <= r && r < hangulEnd {
		if (r-hangulBase)%jamoTCount == 0 {
			return 0, 1 // LV: the vowel combines backward
		}
		return 0, 2 // LVT
	}
	d := norm.NFKC.Properties(b).Decomposition()
	if d == nil {
		if norm.NFKC.Properties(b).BoundaryBefore() {
			return 0, 0
		}
		return 1, 1
	}
	// A decomposition is at most 18 code points (U+FDFA).
	var ns [32]bool
	n := 0
	for i := 0; i < len(d) && n < len(ns); n++ {
		p := norm.NFKC.Properties(d[i:])
		ns[n] = !p.BoundaryBefore()
		i += p.Size()
	}
	for lead < n && ns[lead] {
		lead++
	}
	for trail < n && ns[n-1-trail] {
		trail++
	}
	return min(lead, 3), min(trail, 3)
}
