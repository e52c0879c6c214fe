package sanitize

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file states the output contract independently of the implementation:
// it uses the unicode and norm packages directly, never the cleaner's table.

func isJoiner(r rune) bool { return r == 0x200C || r == 0x200D || r == 0xFE0E || r == 0xFE0F }

// removedRune reports whether r belongs to a class that must never appear in
// the output (SPEC §5 rule 3, plus ESC and C1 from rule 2).
func removedRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7F || 0x80 <= r && r <= 0x9F:
		return true
	case r == 0x200C || r == 0x200D || r == 0xFE0E || r == 0xFE0F:
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point,
		unicode.Noncharacter_Code_Point, unicode.Variation_Selector)
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
		if unicode.IsSpace(r) && r != ' ' {
			bad("whitespace %U not flattened at rune %d", r, k)
		}
		if r == ' ' && (k == 0 || k == len(rs)-1 || rs[k-1] == ' ') {
			bad("leading, trailing or double space at rune %d", k)
		}
		if norm.NFC.PropertiesString(string(r)).CCC() != 0 {
			if marks++; marks > maxNonStarters {
				bad("more than %d combining marks in a row at rune %d", maxNonStarters, k)
			}
		} else {
			marks = 0
		}
	}
	// Joiners: each maximal run is one joiner or U+FE0F U+200D, directly
	// after a character that is not a space.
	for k := 0; k < len(rs); k++ {
		if !isJoiner(rs[k]) {
			continue
		}
		j := k
		for j < len(rs) && isJoiner(rs[j]) {
			j++
		}
		run := string(rs[k:j])
		if run != string(rs[k]) && run != "\uFE0F\u200D" {
			bad("joiners %+q next to each other at rune %d", run, k)
		}
		if k == 0 || rs[k-1] == ' ' {
			bad("joiner %+q not after a visible character at rune %d", run, k)
		}
		k = j
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
