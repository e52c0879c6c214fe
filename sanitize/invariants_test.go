package sanitize

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/graphemes"
	"golang.org/x/text/unicode/norm"
)

// This file states the output contract independently of the implementation:
// it uses the unicode and norm packages directly, never the cleaner's table.

func isJoiner(r rune) bool { return r == 0x200C || r == 0x200D || r == 0xFE0E || r == 0xFE0F }

// removedRune reports whether r belongs to a class that must never appear in
// the output: controls, ESC and C1, format characters but the joiners,
// default ignorables, noncharacters, other variation selectors, private use,
// unassigned code points (those reserved for emoji too), and those assigned
// after the display floor (which become U+FFFD).
func removedRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7F || 0x80 <= r && r <= 0x9F:
		return true
	case isJoiner(r):
		return false
	case !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs):
		return true // Cn
	case unicode.Is(afterFloor, r):
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Co, unicode.Other_Default_Ignorable_Code_Point,
		unicode.Noncharacter_Code_Point, unicode.Variation_Selector)
}

// isSpaceRune reports whether r is whitespace that must become ' '.
func isSpaceRune(r rune) bool { return unicode.IsSpace(r) || r == 0x2800 }

// joinerViolation checks the joiner at rs[k] against its context in the
// output, straight from the Unicode tables; it returns "" if the joiner has
// a visible effect there.
func joinerViolation(rs []rune, k int) string {
	at := func(i int) rune {
		if i < 0 || i >= len(rs) {
			return -1
		}
		return rs[i]
	}
	r, prev, next := rs[k], at(k-1), at(k+1)
	if prev < 0 || prev == ' ' {
		return "not after a visible character"
	}
	if isJoiner(prev) && !(prev == 0xFE0F && r == 0x200D) {
		return "next to another joiner"
	}
	ccc := func(r rune) uint8 {
		if r < 0 {
			return 0
		}
		return norm.NFC.PropertiesString(string(r)).CCC()
	}
	// The letter before, transparent marks and non-starters skipped.
	joinsLeftBefore := func() bool {
		for i := k - 1; i >= 0; i-- {
			q := rs[i]
			if unicode.Is(joinTransparent, q) || !norm.NFC.PropertiesString(string(q)).BoundaryBefore() {
				continue
			}
			return unicode.Is(joinsLeft, q)
		}
		return false
	}
	joining := next >= 0 && unicode.Is(joinsRight, next) && joinsLeftBefore()
	// A virama counts only after a letter of its own script, marks
	// between (docs/sanitizer.md).
	letterBefore := func(i int, virama rune) bool {
		for ; i >= 0; i-- {
			if q := rs[i]; norm.NFC.PropertiesString(string(q)).BoundaryBefore() {
				return unicode.IsLetter(q) && sameScript(q, virama)
			}
		}
		return false
	}
	afterVirama := ccc(prev) == 9 && letterBefore(k-2, prev)
	ext := func(r rune) bool { return r >= 0 && unicode.Is(extPict, r) }
	elementEnd := ext(prev) || (prev == 0xFE0F || unicode.Is(emojiModifier, prev)) && ext(at(k-2))
	keycap := prev == '#' || prev == '*' || '0' <= prev && prev <= '9'
	ok := false
	switch r {
	case 0x200C:
		ok = afterVirama || joining
	case 0x200D:
		ok = afterVirama || ccc(next) == 9 && letterBefore(k-1, next) || elementEnd && ext(next)
	case 0xFE0E:
		ok = !keycap && unicode.Is(textVariation, prev)
	case 0xFE0F:
		ok = keycap && next == 0x20E3 || !keycap && (unicode.Is(emojiVariation, prev) ||
			ext(prev) && (next == 0x200D && ext(at(k+2)) || at(k-2) == 0x200D))
	}
	if !ok {
		return "out of its context"
	}
	return ""
}

// clusterMarks returns the largest number of marks in one grapheme cluster
// of s (as uax29 segments it), each code point counting the code points of
// its full decomposition (NFKD) that are non-starters or marks or Extend,
// joiners and Hangul jamo (letters) excepted.
func clusterMarks(s string) int {
	most := 0
	g := graphemes.FromString(s)
	for g.Next() {
		n := 0
		for _, r := range norm.NFKD.String(g.Value()) {
			if isJoiner(r) || 0x1100 <= r && r <= 0x11FF || 0xA960 <= r && r <= 0xA97F || 0xD7B0 <= r && r <= 0xD7FF {
				continue
			}
			if !norm.NFKC.PropertiesString(string(r)).BoundaryBefore() || unicode.Is(unicode.M, r) || unicode.Is(gcbExtend, r) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// startsNoBase reports whether r, the first character of a text, is one
// that would join the character before the text: a combining mark, a
// joiner or selector, a Hangul vowel or final jamo, or any non-starter.
func startsNoBase(r rune) bool {
	return unicode.Is(unicode.M, r) || isJoiner(r) || unicode.Is(gcbVT, r) ||
		!norm.NFC.PropertiesString(string(r)).BoundaryBefore()
}

// sameScript reports whether a and b are in the same script of the
// unicode package.
func sameScript(a, b rune) bool {
	for _, t := range unicode.Scripts {
		if unicode.Is(t, a) {
			return unicode.Is(t, b)
		}
	}
	return false
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// violations returns every way out = Clean(in, limit) breaks the contract.
// It re-runs Clean to check idempotence and the cut.
func violations(in string, limit int, out string) []string {
	var v []string
	bad := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }

	if !utf8.ValidString(out) {
		bad("invalid UTF-8")
		return v
	}
	rs := []rune(out)
	marks := 0
	for k, r := range rs {
		if removedRune(r) {
			bad("removed character %U at rune %d", r, k)
		}
		if isSpaceRune(r) && r != ' ' {
			bad("whitespace %U not flattened at rune %d", r, k)
		}
		if r == ' ' && (k == 0 || k == len(rs)-1 || rs[k-1] == ' ') {
			bad("leading, trailing or double space at rune %d", k)
		}
		if norm.NFC.PropertiesString(string(r)).CCC() != 0 {
			if marks++; marks > maxMarks {
				bad("more than %d combining marks in a row at rune %d", maxMarks, k)
			}
		} else {
			marks = 0
		}
	}
	// Joiners: each one in a context that gives it a visible effect.
	for k, r := range rs {
		if isJoiner(r) {
			if why := joinerViolation(rs, k); why != "" {
				bad("joiner %U at rune %d: %s", r, k, why)
			}
		}
	}
	if n := clusterMarks(out); n > maxMarks {
		bad("%d marks in one grapheme cluster", n)
	}
	// No terminal cell past the 21 bytes tmux holds, emoji ZWJ sequences
	// included.
	for _, c := range overCells(out) {
		bad("a cell of %d bytes: %+q", len(c), c)
	}
	// A text starts with a base: nothing that would join the character
	// before it.
	if r, _ := utf8.DecodeRuneInString(out); out != "" && startsNoBase(r) {
		bad("starts with %U, which is no base", r)
	}
	if !norm.NFC.IsNormalString(out) {
		bad("not NFC")
	}
	if strings.Contains(norm.NFC.String(out), "\u034F") {
		bad("not stream-safe: NFC inserts U+034F")
	}
	if n := utf16Len(out); limit > 0 && n > limit {
		bad("%d UTF-16 units, limit %d", n, limit)
	}
	if again := Clean(out, limit); again != out {
		bad("not idempotent: Clean(out) = %+q", again)
	}
	if limit > 0 {
		full := Clean(in, 0)
		switch {
		case utf16Len(full) <= limit:
			if out != full {
				bad("cut although the uncut text %+q fits", full)
			}
		case !strings.HasSuffix(out, ellipsis):
			bad("cut text does not end with an ellipsis")
		case !strings.HasPrefix(full, strings.TrimSuffix(out, ellipsis)):
			bad("cut text is not a prefix of the uncut text %+q", full)
		}
	}
	return v
}

// streamed runs in through a Writer, split at the given offsets.
func streamed(in string, limit int, splits []int) (string, error) {
	var buf bytes.Buffer
	w := NewWriter(&buf, limit)
	prev := 0
	for _, at := range splits {
		if at < prev || at > len(in) {
			continue
		}
		if _, err := w.Write([]byte(in[prev:at])); err != nil {
			return "", err
		}
		prev = at
	}
	if _, err := w.Write([]byte(in[prev:])); err != nil {
		return "", err
	}
	err := w.Close()
	return buf.String(), err
}
