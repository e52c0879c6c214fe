// Package busprobe is the capability exchange on a bus: Probe asks whether
// a live diagrelay manager hosts the code on that bus, Answer makes a host
// answer, and Report is the helper for extension authors. The values and
// the compatibility rule are package capability's.
//
// # The exchange
//
// Probe emits a capability.ProbeRequest value (not a pointer) on the topic.
// A host installed with Answer calls its Respond synchronously, before Emit
// returns, with a capability.Capability{Version, Protocol} value. Answer
// accepts a ProbeRequest or a *ProbeRequest and ignores every other
// payload, a nil Respond included.
//
// # Compatibility
//
// Probe reports hosted when at least one reply is compatible
// (capability.Compatible), and returns the first compatible one as received
// (its Version unchanged, with or without "v"). No reply at all, as in a
// top-level session with no host, is not hosted.
//
// The minimum passed to Probe follows capability's version rule. "" means no
// minimum. Any other invalid minimum makes Probe report not hosted without
// emitting anything: failing closed is the safe reading of a caller's bug.
// Callers that take the minimum from input should check it with
// capability.CheckVersion first, to report the error.
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
package busprobe
