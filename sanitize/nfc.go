package sanitize

import (
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A fast path for the NFC form of the segments hostile text is made of: a
// starter with no decomposition followed by combining marks of non-zero
// class with none either (Zalgo, decomposed accents), or conjoining Hangul
// jamo. NFC of such a segment is the marks sorted by class (stably), then
// canonical composition of the starter with each mark it is not blocked
// from. Anything else goes to norm. The pair table is derived from norm
// itself, so the two always agree (TestFastNFCMatchesNorm checks it).

var (
	pairsOnce sync.Once
	pairs     map[uint64]rune // starter<<32 | mark -> primary composite
	// composes has a bit for each character that is the second of some
	// pair (all below composesLen), so that most marks need no map look-up.
	composes [composesLen / 64]uint64
)

const composesLen = 0x20000

func buildPairs() {
	pairs = map[uint64]rune{}
	for r := rune(0xC0); r < 0x20000; r++ {
		if 0xAC00 <= r && r < 0xD7A4 || 0xD800 <= r && r < 0xE000 {
			continue // Hangul is algorithmic
		}
		s := string(r)
		if norm.NFD.PropertiesString(s).Decomposition() == nil || norm.NFC.String(s) != s {
			continue
		}
		d := []rune(norm.NFD.String(s))
		last := d[len(d)-1]
		first := []rune(norm.NFC.String(string(d[:len(d)-1])))
		if len(first) == 1 && norm.NFC.String(string(first[0])+string(last)) == s {
			pairs[uint64(first[0])<<32|uint64(last)] = r
			composes[last>>6] |= 1 << (last & 63) // (every second is below 0x20000, as r is)
		}
	}
}

const (
	hangulS, hangulL, hangulV, hangulT = 0xAC00, 0x1100, 0x1161, 0x11A7
	hangulLN, hangulVN, hangulTN       = 19, 21, 28
)

// fastNFC appends the NFC form of seg to dst and reports true, or reports
// false (dst unchanged in length) if seg is not of a shape it handles.
func fastNFC[S text](dst []byte, seg S) ([]byte, bool) {
	var rs [maxNonStarters + 4]rune
	var cc [maxNonStarters + 4]uint8
	n := 0
	for i := 0; i < len(seg); {
		var r rune
		size := 1
		if b := seg[i]; b < utf8.RuneSelf {
			r = rune(b)
		} else if r, size = decode(seg, i); size == 0 {
			return dst, false
		}
		if n == len(rs) {
			return dst, false
		}
		p := lookup(r)
		if !p.has(propNoDecomp) || n == 0 && !p.starter() || n > 0 && p.ccc() == 0 && !isJamoVT(r) {
			return dst, false
		}
		rs[n], cc[n] = r, p.ccc()
		n++
		i += size
	}
	if n == 0 {
		return dst, false
	}
	s, marks := rs[0], rs[1:n]
	ccs := cc[1:n]
	// Conjoining jamo: L V -> LV, LV T -> LVT, nothing else in the segment.
	if len(marks) > 0 && isJamoVT(marks[0]) {
		switch {
		case hangulL <= s && s < hangulL+hangulLN && len(marks) <= 2 && hangulV <= marks[0] && marks[0] < hangulV+hangulVN:
			s = hangulS + ((s-hangulL)*hangulVN+marks[0]-hangulV)*hangulTN
			marks = marks[1:]
			if len(marks) == 1 && hangulT < marks[0] && marks[0] < hangulT+hangulTN {
				s += marks[0] - hangulT
				marks = marks[:0]
			}
		case hangulS <= s && s < hangulS+hangulLN*hangulVN*hangulTN && (s-hangulS)%hangulTN == 0 &&
			len(marks) == 1 && hangulT < marks[0] && marks[0] < hangulT+hangulTN:
			s += marks[0] - hangulT
			marks = marks[:0]
		}
		if len(marks) > 0 {
			return dst, false
		}
		return utf8.AppendRune(dst, s), true
	}
	for i := range marks {
		if ccs[i] == 0 {
			return dst, false
		}
	}
	return composeMarks(dst, s, marks, ccs), true
}

// composeMarks appends the NFC form of the starter s followed by marks,
// whose classes ccs are all non-zero, where neither s nor any mark has a
// decomposition: the marks sorted by class (stably), then canonical
// composition of the starter with each mark it is not blocked from. It
// sorts marks and ccs in place.
func composeMarks(dst []byte, s rune, marks []rune, ccs []uint8) []byte {
	for i := 1; i < len(marks); i++ {
		for j := i; j > 0 && ccs[j-1] > ccs[j]; j-- {
			marks[j-1], marks[j] = marks[j], marks[j-1]
			ccs[j-1], ccs[j] = ccs[j], ccs[j-1]
		}
	}
	pairsOnce.Do(buildPairs)
	kept := 0
	last := uint8(0) // class of the last mark kept: a mark of that class is blocked
	for i, m := range marks {
		if (kept == 0 || last < ccs[i]) && m < composesLen && composes[m>>6]>>(m&63)&1 != 0 {
			if c, ok := pairs[uint64(s)<<32|uint64(m)]; ok {
				s = c
				continue
			}
		}
		marks[kept], last = m, ccs[i]
		kept++
	}
	dst = utf8.AppendRune(dst, s)
	for _, m := range marks[:kept] {
		dst = utf8.AppendRune(dst, m)
	}
	return dst
}

func isJamoVT(r rune) bool {
	return hangulV <= r && r < hangulV+hangulVN || hangulT < r && r < hangulT+hangulTN
}
