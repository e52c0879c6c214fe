package capability

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// Protocol is the version of the probe and report exchange. Replies with any
// other protocol are not compatible.
const Protocol = 1

// Version is this package's release, the one version a host announces. It is
// a semantic version without the leading "v".
const Version = "1.1.0"

// DiagnosticSince is the first release whose hosts carry child diagnostics
// (the original introduced the channel in 1.1.0). Report requires a host at
// least this new. Unlike Version, it does not change with new releases.
const DiagnosticSince = "1.1.0"

// Topics, named as in the original pi subagent manager.
const (
	// DiagnosticProbeTopic is probed on a child session's own bus; the
	// live manager hosting that child answers.
	DiagnosticProbeTopic = "pi-subagent-manager:diagnostic:probe"
	// CapabilitiesProbeTopic is probed on the parent session's bus; the
	// manager answers while it is enabled.
	CapabilitiesProbeTopic = "pi-subagent-manager:capabilities:probe"
)

// Capability is a host's reply to a probe.
type Capability struct {
	Version  string
	Protocol int
}

// Current returns the Capability this package's hosts announce: what the
// probe answers, and what a service answers to its probe methods.
func Current() Capability { return Capability{Version: Version, Protocol: Protocol} }

// ProbeRequest is the payload of a probe. A host calls Respond with its
// Capability, synchronously.
type ProbeRequest struct {
	Respond func(reply any)
}

// CheckVersion reports whether v is a full semantic version, with or without
// one leading "v", and if not, why.
func CheckVersion(v string) error {
	if fullVersion(v) {
		return nil
	}
	return fmt.Errorf("capability: version %q is not a semantic version MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] (an optional leading \"v\" is allowed)", clip(v))
}

// Compatible reports whether reply is a compatible answer for minVersion (""
// for none), as described in the package documentation, and returns it as a
// Capability. It is what Probe applies to each reply, for replies that
// arrive another way, such as over JSON-RPC.
func Compatible(reply any, minVersion string) (Capability, bool) {
	if minVersion != "" && !fullVersion(minVersion) {
		return Capability{}, false
	}
	return compatible(reply, minVersion)
}

// compatible is Compatible for a minVersion already checked.
func compatible(reply any, minVersion string) (Capability, bool) {
	c, ok := shape(reply)
	if !ok || c.Protocol != Protocol {
		return Capability{}, false
	}
	v := withV(c.Version)
	if !isFull(v) || (minVersion != "" && semver.Compare(v, withV(minVersion)) < 0) {
		return Capability{}, false
	}
	return c, true
}

// shape extracts a Capability from the accepted reply shapes.
func shape(reply any) (Capability, bool) {
	switch r := reply.(type) {
	case Capability:
		return r, true
	case *Capability:
		if r == nil {
			return Capability{}, false
		}
		return *r, true
	case map[string]any:
		v, ok := r["version"].(string)
		if !ok || !isProtocol(r["protocol"]) {
			return Capability{}, false
		}
		return Capability{Version: v, Protocol: Protocol}, true
	}
	return Capability{}, false
}

// isProtocol reports whether a JSON-ish number is exactly Protocol.
func isProtocol(n any) bool {
	switch n := n.(type) {
	case int:
		return n == Protocol
	case int8:
		return n == Protocol
	case int16:
		return n == Protocol
	case int32:
		return n == Protocol
	case int64:
		return n == Protocol
	case uint:
		return n == Protocol
	case uint8:
		return n == Protocol
	case uint16:
		return n == Protocol
	case uint32:
		return n == Protocol
	case uint64:
		return n == Protocol
	case float32:
		return n == Protocol
	case float64:
		return n == Protocol
	case json.Number:
		// As a decoder would have read it into a float64; json.Valid
		// keeps out what ParseFloat alone accepts, such as "0x1p0".
		f, err := n.Float64()
		return err == nil && f == Protocol && json.Valid([]byte(n))
	}
	return false
}

// fullVersion reports whether v, with or without a leading "v", is a full
// semantic version.
func fullVersion(v string) bool { return isFull(withV(v)) }

// isFull reports whether v, with its "v", is a full semantic version.
// semver accepts the shorthands "v1" and "v1.2", which Canonical lengthens;
// a full version's Canonical is a prefix of it (only build metadata is cut),
// and an invalid one's is "".
func isFull(v string) bool {
	canon := semver.Canonical(v)
	return canon != "" && strings.HasPrefix(v, canon)
}

// withV adds the "v" that golang.org/x/mod/semver requires. Callers keep
// the result local, so for short versions it stays on the stack.
func withV(v string) string {
	if strings.HasPrefix(v, "v") {
		return v
	}
	return "v" + v
}

// clip shortens hostile input quoted in an error.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
