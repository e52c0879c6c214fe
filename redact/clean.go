package redact

import (
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/sanitize"
)

// Clean sanitizes s without a limit, redacts it, then cuts it to limit
// UTF-16 code units with the sanitizer's cut (limit <= 0: no cut), so that
// no prefix of a secret that straddles the limit survives (docs/redaction.md, "Decisions":
// redact, then cut). The result obeys every rule of package sanitize.
//
// The cost is the sanitizer's over the whole of s, not over limit units:
// the service's frames bound s (64 KiB). When nothing was redacted and the
// clean text has at most limit bytes (so at most limit UTF-16 units) it is
// already the answer, and Clean costs one sanitizer pass and one keyword
// scan.
func Clean(s string, limit int) (string, diag.Redacted) {
	t := sanitize.Clean(s, 0)
	r, counts := Text(t)
	if counts == nil && (limit <= 0 || len(r) <= limit) {
		return r, nil
	}
	// A marker may now stand where the sanitizer would judge its
	// neighbours differently (a joiner that lost its context): Clean
	// again, which also cuts.
	return sanitize.Clean(r, limit), counts
}

// Message is Clean(s, sanitize.MessageLimit).
func Message(s string) (string, diag.Redacted) { return Clean(s, sanitize.MessageLimit) }

// Source is Clean(s, sanitize.SourceLimit).
func Source(s string) (string, diag.Redacted) { return Clean(s, sanitize.SourceLimit) }
