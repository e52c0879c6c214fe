package busprobe

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
)

// FuzzProbe builds up to eight replies of assorted shapes from the fuzz
// input, answers a Probe with them, and checks the result against ref, a
// decision written from the semver.org grammar and precedence rules without
// golang.org/x/mod/semver. It also checks Compatible per reply, and that
// Probe never panics and never emits for an invalid minimum.
func FuzzProbe(f *testing.F) {
	f.Add([]byte{0x21}, "1.1.0", "v2.0.0", "1.1.0", 1.0)
	f.Add([]byte{0x00, 0x44, 0x21}, "1.1.0-rc.1", "1.1", "", 1.0)
	f.Add([]byte{0x28, 0x08}, "v1.2.3+build", "1.0.0-alpha.beta", "1.0.0-alpha.1", 1.5)
	f.Add([]byte{0x04, 0x0b}, "2.0.0", "1e0", "v1.1.0", 1.0)
	f.Add([]byte{0x03, 0x09, 0x0a, 0x06, 0x07}, "1.1.0", "1", "x", math.NaN())
	f.Fuzz(func(t *testing.T, shapes []byte, version, alt, min string, proto float64) {
		if len(shapes) > 8 {
			shapes = shapes[:8]
		}
		replies := make([]any, len(shapes))
		wantCap, wantHosted := capability.Capability{}, false
		for i, s := range shapes {
			replies[i] = buildReply(s, version, alt, proto)
			c, ok := ref(s, version, alt, proto, min)
			if got, gotOK := capability.Compatible(replies[i], min); gotOK != ok || got != c {
				t.Fatalf("Compatible(%#v, %q) = %v, %v; reference says %v, %v", replies[i], min, got, gotOK, c, ok)
			}
			if ok && !wantHosted {
				wantCap, wantHosted = c, true
			}
		}

		b := bus.New()
		b.SetPanicHook(func(topic string, v any) { t.Fatalf("panic on %q: %v", topic, v) })
		emitted := false
		b.On(capability.DiagnosticProbeTopic, func(p any) {
			emitted = true
			for _, r := range replies {
				p.(capability.ProbeRequest).Respond(r)
			}
		})
		c, hosted := Probe(b, capability.DiagnosticProbeTopic, min)
		if hosted != wantHosted || c != wantCap {
			t.Fatalf("Probe(min %q) with %#v = %v, %v; reference says %v, %v", min, replies, c, hosted, wantCap, wantHosted)
		}
		if refMinValid := min == "" || refValid(min); emitted != refMinValid {
			t.Fatalf("min %q: emitted = %v, reference validity %v", min, emitted, refMinValid)
		}
		if err := capability.CheckVersion(version); (err == nil) != refValid(version) {
			t.Fatalf("CheckVersion(%q) = %v, reference validity %v", version, err, refValid(version))
		}
	})
}

// buildReply makes a reply of the shape chosen by the low four bits of s;
// bit 4 picks alt instead of version; bits 5-7 are an integer protocol.
func buildReply(s byte, version, alt string, proto float64) any {
	v := version
	if s&0x10 != 0 {
		v = alt
	}
	p := int(s >> 5)
	switch s & 0x0f {
	case 0:
		return nil
	case 1:
		return capability.Capability{Version: v, Protocol: p}
	case 2:
		return &capability.Capability{Version: v, Protocol: p}
	case 3:
		return (*capability.Capability)(nil)
	case 4:
		return map[string]any{"version": v, "protocol": proto}
	case 5:
		return map[string]any{"version": v, "protocol": p}
	case 6:
		return map[string]any{"version": v}
	case 7:
		return map[string]any{"version": proto, "protocol": float64(p)}
	case 8:
		return map[string]any{"version": v, "protocol": json.Number(alt)}
	case 9:
		return v
	case 10:
		return map[string]string{"version": v, "protocol": strconv.Itoa(p)}
	case 11:
		return map[string]any{"version": v, "protocol": float32(proto)}
	case 12:
		return map[string]any{"version": v, "protocol": uint64(p)}
	case 13:
		return map[string]any{"version": v, "protocol": strconv.Itoa(p)}
	case 14:
		return capability.ProbeRequest{}
	default:
		return float64(p) // a bare number
	}
}

// ref is the reference decision for buildReply(s, ...) against min.
func ref(s byte, version, alt string, proto float64, min string) (capability.Capability, bool) {
	v := version
	if s&0x10 != 0 {
		v = alt
	}
	p := int(s >> 5)
	var protoOK bool
	switch s & 0x0f {
	case 1, 2, 5, 12:
		protoOK = p == 1
	case 4:
		protoOK = proto == 1
	case 8:
		protoOK = refJSONOne(alt)
	case 11:
		protoOK = float32(proto) == 1
	default: // no reply, wrong type, missing or non-numeric fields
		return capability.Capability{}, false
	}
	if !protoOK || !refValid(v) {
		return capability.Capability{}, false
	}
	if min != "" && (!refValid(min) || refCompare(v, min) < 0) {
		return capability.Capability{}, false
	}
	return capability.Capability{Version: v, Protocol: 1}, true
}

// The grammar from semver.org.
var semverRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

func refParts(v string) []string {
	return semverRE.FindStringSubmatch(strings.TrimPrefix(v, "v"))
}

func refValid(v string) bool { return refParts(v) != nil }

// refCompare orders two valid versions by semver.org §11 precedence.
func refCompare(a, b string) int {
	pa, pb := refParts(a), refParts(b)
	for i := 1; i <= 3; i++ {
		if c := refNumCompare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	switch {
	case pa[4] == pb[4]:
		return 0
	case pa[4] == "":
		return 1 // a release ranks above its pre-releases
	case pb[4] == "":
		return -1
	}
	ia, ib := strings.Split(pa[4], "."), strings.Split(pb[4], ".")
	for i := 0; i < len(ia) && i < len(ib); i++ {
		na, nb := refIsNum(ia[i]), refIsNum(ib[i])
		var c int
		switch {
		case na && nb:
			c = refNumCompare(ia[i], ib[i])
		case na:
			c = -1
		case nb:
			c = 1
		default:
			c = strings.Compare(ia[i], ib[i])
		}
		if c != 0 {
			return c
		}
	}
	return len(ia) - len(ib)
}

func refIsNum(s string) bool { return strings.Trim(s, "0123456789") == "" }

// refNumCompare compares decimal strings without leading zeros, of any
// length.
func refNumCompare(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// refJSONOne reports whether s is a JSON number (RFC 8259 grammar) equal to
// 1 once read as a float64.
func refJSONOne(s string) bool {
	if !regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`).MatchString(s) {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 1
}
