// Package frame is how a child's source is shown inside the brackets of a
// printed frame ("/root/x [lint]: message"), by one rule wherever a source
// is printed: the relay's notifications, watch, and thread status.
package frame

import (
	"strings"
	"unicode"

	"github.com/diagrelay/diagrelay/sanitize"
)

// Source returns a sanitized source as it is shown inside the brackets
// of a frame: the notification text, every line of watch and of
// diagrelay thread status that shows a source. A child must not be able to forge the frame (a
// source such as "lint]: ok /root [system" would otherwise read as a
// second thread's notification), so:
//
//   - the source shows only letters, marks and digits of any script and
//     the characters . _ - / @ : + #; every other character shows as "_";
//   - a Grapheme_Cluster_Break=Prepend character shows as "_" too, since
//     it would glue the closing "]" into its cluster ("lint\u0d4e");
//   - it starts with a letter or a digit: what comes before the first one
//     (marks that would combine with the frame's own "[", punctuation, and
//     what shows as "_") is dropped, so it may be empty.
//
// The parent message and the status keep the source as it was sanitized.
func Source(source string) string {
	if kept(source) {
		return source // most sources: nothing to change, nothing to copy
	}
	return rewrite(source)
}

// punct is the punctuation a framed source shows.
const punct = "._-/@:+#"

// rewrite is Source character by character.
func rewrite(source string) string {
	var b strings.Builder
	for _, c := range source {
		ok := unicode.IsLetter(c) || unicode.IsMark(c) || unicode.IsDigit(c) || strings.ContainsRune(punct, c)
		if !ok || sanitize.IsPrepend(c) {
			c = '_'
		}
		if b.Len() == 0 && !(unicode.IsLetter(c) || unicode.IsDigit(c)) {
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// kept reports whether Source returns source as it is: ASCII letters,
// digits and the allowed punctuation only, starting with a letter or a
// digit (no ASCII character is Prepend).
func kept(source string) bool {
	for i := 0; i < len(source); i++ {
		switch c := source[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && strings.IndexByte(punct, c) >= 0:
		default:
			return false
		}
	}
	return true
}
