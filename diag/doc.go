// Package diag holds the reports that extensions in a child agent session
// send to their parent, how a bus payload becomes a clean Report (Parse), and
// the per-runtime Gate that decides which reports are delivered.
//
// # Reports
//
// A report has a level (exactly "info", "warning" or "error"), a message
// (not blank after sanitizing) and an optional source (absent if blank after
// sanitizing). Parse accepts a Report, a *Report, a map[string]any (what a
// JSON bridge produces) or a map[string]string, and refuses everything else
// with an error that matches ErrInvalid. Extra keys in a map are ignored:
// nothing in a payload can claim a thread path, since attribution comes only
// from which child's bus carried it. Parse sanitizes; ParseWith takes the
// cleaning as an option, and the relay passes the secret scanner
// (docs/redaction.md), so that everything after it, the duplicate check
// included, sees the redacted text.
//
// # The gate
//
// Each child runtime generation has one Gate; a reopened runtime gets a new
// one. For each report, in this order, the first rule that fails decides:
//
//	parse → sanitize → redact → valid? → duplicate? → cap? → window? → deliver
//
// ParseWith does the first three (redact when the relay asks it to) and
// Gate.Admit the rest; a caller counts a
// payload Parse refuses by admitting the zero Report, which is invalid:
//
//   - Invalid: a payload Parse refuses; or, re-checked by Admit without
//     sanitizing again, a level that is not exactly info, warning or error,
//     a blank message, or a text longer than sanitizing can make it.
//   - Duplicate: the same (level, source, message) as a report this Gate
//     already delivered. It uses no window slot.
//   - Cap: MaxPerGeneration (20) reports delivered by this Gate.
//   - Window: at most MaxPerWindow (5) delivered in any half-open window
//     [t, t+Window) of 10 s. A report at now is delivered when fewer than 5
//     were delivered in (now-10s, now]: a 6th exactly 10 s after the first
//     is delivered, at 9.999 s it is not. A report dropped here is not
//     remembered, so the same text can be delivered later.
//
// Time is the caller's now, from a monotonic, injectable clock, never from
// the child. If now is before the latest now the Gate has seen (in any
// earlier call, whatever its verdict), the clock went backwards and the Gate
// fails closed: the report is dropped as rate (after the validity, duplicate
// and cap checks, which do not depend on time) and the Gate's clock stays at
// its latest reading, so a clock that jumps back can never reopen the window.
//
// Drops are silent toward the parent; Gate.Counts counts them per reason, by
// the names Verdict.String gives: "duplicate", "rate", "cap", "invalid".
//
// # Why not golang.org/x/time/rate
//
// A token bucket is not this window. With burst 5, refilling 5 tokens per
// 10 s (one every 2 s), rate.Limiter admits 5 reports at once and then one
// every 2 s: 9 in the first 10 s, where the rule allows 5
// (TestTokenBucketAdmitsNine shows it beside the Gate). rate.Limiter bounds
// an average; the rule here bounds every window. x/time/rate is the right
// tool for the host-wide notification limit, which is an average.
//
// The Gate is also cheaper than a locked limiter: it keeps the last 5
// delivery times in a ring and, for the 20 delivered reports, a 32-bit key
// (level, lengths, first and last bytes) and the reports' strings in fixed
// arrays. The duplicate check compares keys and compares text only when keys
// match, so a new report costs a few loads and a duplicate one comparison
// with the report it repeats. No lock, no maps, no allocation on any path. A
// Gate's size is fixed: 848 bytes (896 on the heap), plus the delivered
// reports' own text, which it shares with them (see TestGateSize and
// BenchmarkGateMemory).
//
// A Gate is not safe for concurrent use; the relay serializes the calls for
// one runtime.
package diag
