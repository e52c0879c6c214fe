// Package shellquote writes a word for a POSIX shell: every command that
// prints a command line for the user to run (chmod, mv, export) quotes its
// words with it.
package shellquote

import "strings"

// Quote returns s as one word for a POSIX shell: as it is when every byte
// is safe, else in single quotes.
func Quote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
