// Package wire is the one home of diagrelay's JSON-RPC 2.0 protocol in Go:
// the envelope (requests, replies, notifications), the error object and
// its codes, the method names, every params and result shape, and the
// event notifications. The contract is docs/protocol.md; these types are
// how the module's Go code speaks it, on both sides: package service
// decodes params into them and encodes results from them, package client,
// the watch view and the tests decode and send the same types. Nothing
// else in the module carries a JSON tag of the protocol but diag.Dropped
// (below), so a member can be renamed in one place only, and a reader
// cannot drift from the writer.
//
// The package is internal on purpose: the protocol is versioned by the
// "protocol" number of the probe (docs/protocol.md), not by a Go API, and
// an exported copy would be a second contract with its own compatibility
// promise. Package client re-exports what its own API returns (its Error
// type and the codes it documents) as aliases of the types here.
//
// The library's types (relay, mailbox, capability, diag) carry no JSON
// tags of the protocol but diag.Dropped, the one type of the drop
// counters: its tags are the protocol's "dropped" members, which this
// package's Dropped aliases and wire_test.go holds to the Reason* values.
// The service maps the other library types onto these shapes
// (service/wire.go).
//
// Pointers in a shape mean "present or not": in params, that the server
// can tell an absent member from "" (ReportParams, ReadParams.Limit,
// AckParams.IDs); in Event, which members belong to the event's kind.
package wire
