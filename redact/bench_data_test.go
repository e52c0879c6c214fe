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

// logMessage is a 1000-unit diagnostic with no secret, of log lines: a
// timestamp, a URL path, a module path, a commit hash, a UUID, a file path.
// Unlike cleanMessage it has the long runs of secret characters (hashes,
// paths) that make the rules look closer: the keyword scan and anchors
// run on it.
func logMessage() string {
	const line = "2026-12-01T19:03:04.123Z INFO http: GET /api/v1/users/4711 200 in 12ms; ok github.com/acme/api/internal/auth 1.234s; " +
		"commit 3f1c9a0e5b7d2468ace13579bdf02468ace13579: fix token cache eviction (#812); request id 1b4e28ba-2fa1-11d2-883f-0016d3cca427 done; " +
		"/home/dev/go/pkg/mod/golang.org/x/text@v0.44.0/unicode/norm/normalize.go:212: inlining call; worker 3: key order kept, 1234 keys scanned. "
	s := strings.Repeat(line, 1000/len(line)+1)
	return strings.TrimSpace(s[:1000])
}
