// Package capability lets code on a bus find out, synchronously, whether a
// live diagrelay manager hosts it, and lets the host answer.
//
// A child session's extensions probe DiagnosticProbeTopic on the child's own
// bus; tools in the parent session probe CapabilitiesProbeTopic on the
// parent's bus. The topic names are those of the original pi subagent
// manager, for parity. Detection is capability detection among trusted code,
// not authentication.
//
// # The exchange
//
// Probe emits a ProbeRequest value (not a pointer) on the topic. A host
// installed with Answer calls its Respond synchronously, before Emit returns,
// with a Capability{Version, Protocol} value. Answer accepts a ProbeRequest
// or a *ProbeRequest and ignores every other payload, a nil Respond included.
//
// # Compatibility
//
// A reply is compatible with a minimum version when all of these hold:
//
//   - its shape is Capability, a non-nil *Capability, or a map[string]any
//     with a string "version" and a numeric "protocol" (what a JSON bridge
//     produces). A map's protocol may be any Go integer or float type, or a
//     json.Number, holding exactly the integer 1: float64(1) passes, 1.5,
//     NaN and the string "1" do not;
//   - its protocol is Protocol (1);
//   - its version is a full semantic version MAJOR.MINOR.PATCH, with optional
//     pre-release and build parts, with or without one leading "v" (see
//     CheckVersion; the shorthands "1" and "1.2" that golang.org/x/mod/semver
//     accepts are not full versions and are rejected);
//   - the version is >= the minimum in semantic-version precedence: a
//     pre-release sorts before its release, build metadata is ignored.
//
// Every other reply is not compatible: nil (the original's legacy
// argument-free reply), another protocol, an invalid or lower version, any
// other type. Probe reports hosted when at least one reply is compatible, and
// returns the first compatible one as received (its Version unchanged, with
// or without "v"). No reply at all, as in a top-level session with no host,
// is not hosted.
//
// The minimum passed to Probe follows the same version rule. "" means no
// minimum. Any other invalid minimum makes Probe report not hosted without
// emitting anything: failing closed is the safe reading of a caller's bug.
// Callers that take the minimum from input should check it with
// CheckVersion first, to report the error.
//
// # Late and concurrent replies
//
// Respond may be kept and called at any time from any goroutine. Calls
// after Probe returned are ignored; concurrent calls during Probe are safe,
// and the first compatible reply to be recorded wins.
//
// # Reporting
//
// Report is the Go form of the original's report() helper for extension
// authors: probe, and on a host emit the diagnostic; otherwise tell the
// caller to use its own top-level reporting.
package capability
