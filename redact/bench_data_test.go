package redact

import "strings"

// cleanMessage is a 1000-unit diagnostic with no secret in it, of the
// words a build or lint diagnostic uses, keywords of several rules among
// them ("key", "token", "access", "task", "they").
func cleanMessage() string {
	const line = "lint: task build-api finished in 312ms; 4 files changed, they passed the access check, token cache warm, key order kept. "
	s := strings.Repeat(line, 1000/len(line)+1)
	return strings.TrimSpace(s[:1000])
}
