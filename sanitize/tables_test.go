package sanitize

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Every code point, checked against the Unicode tables directly.
func TestTableMatchesUnicode(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		p := lookup(r)
		var want props
		switch {
		case isJoiner(r):
			want = kindJoiner
		case isSpaceRune(r):
			want = kindSpace
		case removedRune(r):
			want = kindRemove
		}
		if p.kind() != want {
			t.Fatalf("%U: kind %d, want %d", r, p.kind(), want)
		}
		s := string(r)
		np := norm.NFC.PropertiesString(s)
		if p.starter() != np.BoundaryBefore() {
			t.Fatalf("%U: starter %v, norm says %v", r, p.starter(), np.BoundaryBefore())
		}
		if p.stable() != (np.BoundaryBefore() && norm.NFC.String(s) == s) {
			t.Fatalf("%U: stable %v", r, p.stable())
		}
		// A character that is not a starter counts toward the cap, so an
		// NFC segment is never longer than 31 characters.
		if !p.starter() && p.lead() == 0 {
			t.Fatalf("%U: a non-starter with no leading non-starters", r)
		}
	}
}

// NFC must never bring back what the cleaner removed: a kept character
// decomposes only into kept characters, and composition (which yields only
// primary composites) never yields a removed, space or joiner character.
func TestNormalizationCannotCreateRemovedCharacters(t *testing.T) {
	for r := rune(0xA0); r <= unicode.MaxRune; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		s := string(r)
		d := norm.NFD.String(s)
		if lookup(r).kind() == kindKeep {
			for _, q := range d {
				if q >= 0x80 && lookup(q).kind() != kindKeep || q < 0x80 && (q <= ' ' || q == 0x7F) {
					t.Fatalf("kept %U decomposes to %U", r, q)
				}
			}
			continue
		}
		if utf8.RuneCountInString(d) >= 2 && norm.NFC.String(d) == s {
			t.Fatalf("%U is removed but NFC composes it from %+q", r, d)
		}
	}
}

// The non-starter counts must match norm's stream-safe accounting exactly:
// norm inserts U+034F into a run of more than 30, and never into 30.
func TestNonStarterCountsMatchNorm(t *testing.T) {
	const filler = "\u0334" // ccc 1; composes with nothing
	for r := rune(0xA0); r <= unicode.MaxRune; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		p := lookup(r)
		if p.kind() != kindKeep {
			continue
		}
		s := string(r)
		// Characters with nothing to count are the bulk; sample them.
		trivial := p.lead() == 0 && p.trail() == 0 && norm.NFKD.String(s) == s
		if trivial && r%61 != 0 {
			continue
		}
		if lead := p.lead(); lead > 0 {
			fits := "a" + strings.Repeat(s, maxNonStarters/lead) + strings.Repeat(filler, maxNonStarters%lead)
			if strings.Contains(norm.NFC.String(fits), "\u034F") {
				t.Fatalf("%U (lead %d): norm overflows at %d", r, lead, maxNonStarters)
			}
			if strings.Contains(norm.NFC.String(fits+filler), "\u034F") == false {
				t.Fatalf("%U (lead %d): norm does not overflow at %d", r, lead, maxNonStarters+1)
			}
			continue
		}
		trail := p.trail()
		fits := s + strings.Repeat(filler, maxNonStarters-trail)
		if strings.Contains(norm.NFC.String(fits), "\u034F") {
			t.Fatalf("%U (trail %d): norm overflows at %d", r, trail, maxNonStarters)
		}
		if strings.Contains(norm.NFC.String(fits+filler), "\u034F") == false {
			t.Fatalf("%U (trail %d): norm does not overflow at %d", r, trail, maxNonStarters+1)
		}
	}
}

// The UTF-8 bitmaps and plainLane say what the blocks say: a run takes a
// character exactly when its properties are runProps.
func TestRunTablesMatchBlocks(t *testing.T) {
	for r := rune(0x80); r < 0x10000; r++ {
		if 0xD800 <= r && r < 0xE000 {
			continue
		}
		p := lookup(r) // builds the block, and so the bits
		want := p&runMask == runProps
		var b [4]byte
		n := utf8.EncodeRune(b[:], r)
		w := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		if got := plainLenBMP(w) == n; got != want {
			t.Fatalf("%U: the bitmap says %v, the block %v", r, got, want)
		}
		if r < 0x800 && (plainLane[uint16(b[0])|uint16(b[1])<<8].Load() == 1) != want {
			t.Fatalf("%U: plainLane says %v, the block %v", r, !want, want)
		}
	}
	// Every other pair of bytes finds 0: a lane is 1 only for the 2-byte
	// form of a character a run takes.
	for l := range 1 << 16 {
		b := []byte{byte(l), byte(l >> 8)}
		r, n := utf8.DecodeRune(b)
		ok := n == 2 && lookup(r)&runMask == runProps
		if (plainLane[l].Load() == 1) != ok {
			t.Fatalf("plainLane[%#04x] is %d, the bytes %x decode to %U (%d bytes)", l, plainLane[l].Load(), b, r, n)
		}
	}
}
