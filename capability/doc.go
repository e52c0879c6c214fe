// Package capability is what a diagrelay host is and which hosts a caller
// can use: the Capability a host answers with, the probe topics and
// request, and the rule that judges a reply (Compatible). It holds no bus:
// the exchange on a bus is package capability/busprobe, so that a socket
// client (package client) judges a host's reply without linking the bus.
//
// A child session's extensions probe DiagnosticProbeTopic on the child's own
// bus; tools in the parent session probe CapabilitiesProbeTopic on the
// parent's bus. The topic names are those of the original pi subagent
// manager, for parity. Detection is capability detection among trusted code,
// not authentication.
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
// other type.
package capability
