package diag

import (
	"errors"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/sanitize"
)

// monotonicOrigin carries a monotonic reading; Add keeps it.
var monotonicOrigin = time.Now()

// gateStep turns one fuzz byte into a time step, weighted toward the edges
// that matter: none, 10 s and 9.969..9.999 s, the window edge itself (see
// gateRun.toEdge), and backwards steps.
func gateStep(run *gateRun, b byte) time.Duration {
	n := time.Duration(b & 31)
	switch b >> 5 {
	case 0:
		return 0
	case 1:
		return n * time.Nanosecond
	case 2:
		return Window - n*time.Millisecond
	case 3:
		return n * 100 * time.Millisecond
	case 4:
		return n * time.Second
	case 5:
		return -n * time.Nanosecond
	case 6:
		return -n * 500 * time.Millisecond
	default:
		return run.toEdge(edgeOffsets[int(n)%len(edgeOffsets)])
	}
}

// FuzzGate runs a Gate and the brute-force reference on the sequence of
// (time step, report) pairs the input encodes, two bytes a pair, and checks
// that they agree at every call and that the deliveries respect the limits.
// The first byte picks a wall-clock or a monotonic origin.
func FuzzGate(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0x5f, 5, 0x40, 5})
	f.Add([]byte{1, 0xe0, 20, 0xe0, 21, 0xe0, 22, 0xe0, 23, 0xe0, 24, 0xe0, 25, 0xdf, 26, 0xe0, 27})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		origin := t0
		if data[0]&1 == 1 {
			origin = monotonicOrigin
		}
		data = data[1:]
		if len(data) > 2000 {
			data = data[:2000] // the reference is quadratic
		}
		run := newGateRun(origin)
		for i := 0; i+1 < len(data); i += 2 {
			r := reportPool[int(data[i+1])%len(reportPool)]
			if err := run.step(gateStep(run, data[i]), r); err != nil {
				t.Fatal(err)
			}
		}
		if err := run.check(); err != nil {
			t.Fatal(err)
		}
	})
}

// Payload shapes and field kinds for FuzzParse.
const (
	shapeAnyMap = iota
	shapeStringMap
	shapeReport
	shapeReportPtr
)

const (
	fieldString = iota
	fieldMissing
	fieldNil
	fieldOther // a non-string value
)

// nonString returns a value of some type other than string, chosen by s.
func nonString(s string) any {
	switch len(s) % 5 {
	case 0:
		return float64(len(s))
	case 1:
		return true
	case 2:
		return []any{s}
	case 3:
		return map[string]any{"value": s}
	default:
		return []byte(s)
	}
}

// FuzzParse builds a payload from the inputs, shaped by shape: the payload
// type in bits 0-1 and, for a map[string]any, how each field is given in
// bits 2-3 (level), 4-5 (message) and 6-7 (source). It checks that Parse
// never panics, that it accepts exactly the valid payloads, that what it
// returns is clean (fixed points of the sanitizer, within the byte bounds,
// delivered by a new Gate) and that its errors match ErrInvalid and are short
// printable ASCII.
func FuzzParse(f *testing.F) {
	f.Add("info", "hello", "lint", uint8(0))
	f.Add("warning", "\x1b[31mred\x1b[0m", "", uint8(1))
	f.Add("error", "a\u202eb", " src ", uint8(2))
	f.Add("warn", "x", "y", uint8(3))
	f.Add("info", " \t", "", uint8(0))
	f.Add("info", "x", "y", uint8(fieldOther<<2))
	f.Add("info", "x", "y", uint8(fieldNil<<4))
	f.Add("info", "x", "y", uint8(fieldMissing<<6))
	f.Add("error", "x", "y", uint8(fieldNil<<6))
	f.Fuzz(func(t *testing.T, level, message, source string, shape uint8) {
		valid := Level(level).Valid()
		var payload any
		switch shape & 3 {
		case shapeAnyMap:
			m := map[string]any{"thread": "/root/evil", "path": level, "from": message}
			put := func(key, s string, kind uint8) {
				switch kind {
				case fieldString:
					m[key] = s
				case fieldNil:
					m[key] = nil
				case fieldOther:
					m[key] = nonString(s)
				}
			}
			lk, mk, sk := shape>>2&3, shape>>4&3, shape>>6&3
			put("level", level, lk)
			put("message", message, mk)
			put("source", source, sk)
			valid = valid && lk == fieldString && mk == fieldString && sk != fieldOther
			payload = m
		case shapeStringMap:
			payload = map[string]string{"level": level, "message": message, "source": source, "thread": "/root"}
		case shapeReport:
			payload = Report{Level(level), message, source}
		case shapeReportPtr:
			payload = &Report{Level(level), message, source}
		}
		var want Report
		if valid {
			msg, src := sanitize.Message(message), sanitize.Source(source)
			want = Report{Level(level), msg, src}
			valid = !blank(want.Message)
			if blank(want.Source) || (shape&3 == shapeAnyMap && shape>>6&3 != fieldString) {
				want.Source = ""
			}
		}

		r, err := Parse(payload)
		if err != nil {
			if valid {
				t.Fatalf("Parse(%#v) = %v, want %+v", payload, err, want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error %v does not match ErrInvalid", err)
			}
			msg := err.Error()
			if len(msg) > 300 {
				t.Fatalf("error is %d bytes long: %q", len(msg), msg)
			}
			for i := range len(msg) {
				if msg[i] < 0x20 || msg[i] > 0x7e {
					t.Fatalf("error has byte %#x: %q", msg[i], msg)
				}
			}
			return
		}
		if !valid {
			t.Fatalf("Parse(%#v) = %+v, want an error", payload, r)
		}
		if r != want {
			t.Fatalf("Parse(%#v) = %+v, want %+v", payload, r, want)
		}
		if sanitize.Message(r.Message) != r.Message || sanitize.Source(r.Source) != r.Source {
			t.Fatalf("Parse returned %+v, which sanitizing changes", r)
		}
		if len(r.Message) > maxMessageBytes || len(r.Source) > maxSourceBytes {
			t.Fatalf("Parse returned %d and %d bytes, over the bounds", len(r.Message), len(r.Source))
		}
		if v := NewGate().Admit(r, t0); v != Delivered {
			t.Fatalf("a new Gate says %v to %+v from Parse", v, r)
		}
	})
}
