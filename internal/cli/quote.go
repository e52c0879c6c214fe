package cli

import "strings"

// ShellQuote returns s as one word for a POSIX shell: as it is when every
// byte is safe, else in single quotes. Every command that prints a command
// line for the user to run quotes its words with it.
func ShellQuote(s string) string {
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
