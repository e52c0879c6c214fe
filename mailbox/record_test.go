package mailbox

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

func TestRecordErrors(t *testing.T) {
	good := msg("/root", "/root/x", "m", 0)
	rec := encodeRecord(nil, &good)
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":            {nil, "empty record"},
		"version 0":        {[]byte{0}, "unknown record version 0"},
		"version 2":        {append([]byte{2}, rec[1:]...), "unknown record version 2"},
		"truncated":        {rec[:len(rec)-1], "truncated"},
		"trailing byte":    {append(bytes.Clone(rec), 0), "1 bytes after the record"},
		"overlong varint":  {[]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "overlong varint"},
		"non-minimal":      {[]byte{1, 0x80, 0x00}, "non-minimal varint"},
		"field too long":   {[]byte{1, 0x05, 'a'}, "field of 5 bytes but only 1 left"},
		"huge field":       {[]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "but only 0 left"},
		"no recipient":     {encodeRecord(nil, &relay.ParentMessage{At: t0}), "no recipient"},
		"nanoseconds 1e9":  {append(bytes.Clone(rec[:len(rec)-4]), 0x80, 0x94, 0xeb, 0xdc, 0x03), "nanoseconds 1000000000 out of range"},
		"year out of JSON": {encodeRecord(nil, &relay.ParentMessage{Recipient: "/r", At: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)}), "outside years 0 to 9999"},
	} {
		_, err := decodeRecord(c.data)
		if err == nil {
			t.Errorf("%s: decoded", name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q", name, err, c.want)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, m := range []relay.ParentMessage{
		msg("/root", "/root/x", "m", 0),
		{Recipient: "/r", At: time.Time{}},
		{Recipient: "/r", Level: diag.Info, At: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Recipient: "/r", At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{Recipient: "/r", At: time.Unix(0, 0)},
		{Recipient: "/r", At: time.Unix(-1, 999999999)},
	} {
		rec := encodeRecord(nil, &m)
		got, err := decodeRecord(rec)
		if err != nil || !sameMessage(got, m) || got.At.Location() != time.UTC {
			t.Errorf("%+v: decoded %+v, %v", m, got, err)
		}
	}
}

// FuzzRecord: any bytes decode to a message or an error, never a panic; a
// decoded message is valid and encodes back to exactly the same bytes
// (one encoding per message).
func FuzzRecord(f *testing.F) {
	m := msg("/root", "/root/x", "m", 0)
	f.Add(encodeRecord(nil, &m))
	f.Add(encodeRecord(nil, &relay.ParentMessage{Recipient: "/r", At: time.Unix(-1, 5)}))
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{1, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeRecord(data)
		if err != nil {
			if m != (relay.ParentMessage{}) {
				t.Fatalf("error %v with a non-zero message %+v", err, m)
			}
			return
		}
		if err := validate(&m); err != nil {
			t.Fatalf("decoded an invalid message: %v", err)
		}
		if m.At.Location() != time.UTC {
			t.Fatalf("At in %v", m.At.Location())
		}
		if again := encodeRecord(nil, &m); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded\n %x\nfrom\n %x", again, data)
		}
	})
}

// FuzzRecordRoundTrip: every message validate accepts comes back from
// encode then decode with the same fields and the same instant, in UTC.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add("/root", "/root/x", "text", "warning", "lint", "message", int64(1748779200), uint32(123456789), 3600)
	f.Add("/k", "", "", "", "", "", int64(-62135596800), uint32(0), 0)
	f.Add("\x00\xff", "\x1b[31m", "\u202e", "x", "", "é", int64(math.MaxInt64), uint32(math.MaxUint32), -1)
	f.Fuzz(func(t *testing.T, recipient, from, text, level, source, message string, sec int64, nsec uint32, zoneOffset int) {
		m := relay.ParentMessage{
			Recipient: recipient, From: from, Text: text, Level: diag.Level(level),
			Source: source, Message: message,
			At: time.Unix(sec, int64(nsec%1e9)).In(time.FixedZone("Z", zoneOffset%(24*3600))),
		}
		if validate(&m) != nil {
			return
		}
		got, err := decodeRecord(encodeRecord(nil, &m))
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", m, err)
		}
		if !sameMessage(got, m) || got.At != m.At.UTC() {
			t.Fatalf("got %+v, want %+v", got, m)
		}
	})
}
