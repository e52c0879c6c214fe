package mailbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

func TestRecordErrors(t *testing.T) {
	good := msg("/root", "/root/x", "m", 0)
	rec := encodeRecord(7, &good)
	v1 := encodeRecordV1(nil, &good)
	// reseal gives a version 2 record whose checksum matches its
	// (damaged) body, so that the body's own checks are reached.
	reseal := func(body []byte) []byte { return sealRecord(bytes.Clone(body), bodySum(body), 7) }
	body := rec[:len(rec)-crcSize]
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":                {nil, "empty record"},
		"version 0":            {[]byte{0}, "unknown record version 0"},
		"version 3":            {append([]byte{3}, rec[1:]...), "unknown record version 3"},
		"v2 too short":         {[]byte{2, 0, 0, 0}, "too short for its checksum"},
		"v2 flipped bit":       {flipBit(rec, 8*(len(rec)/2)), "checksum mismatch"},
		"v2 flipped checksum":  {flipBit(rec, 8*len(rec)-1), "checksum mismatch"},
		"v2 without checksum":  {body, "checksum mismatch"},
		"v2 other id":          {encodeRecord(8, &good), "checksum mismatch"},
		"v1 bytes as v2":       {append([]byte{2}, v1[1:]...), "checksum mismatch"},
		"v2 truncated body":    {reseal(body[:len(body)-1]), "truncated"},
		"v2 trailing byte":     {reseal(append(bytes.Clone(body), 0)), "1 bytes after the record"},
		"v1 truncated":         {v1[:len(v1)-1], "truncated"},
		"v1 trailing byte":     {append(bytes.Clone(v1), 0), "1 bytes after the record"},
		"overlong varint":      {[]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "overlong varint"},
		"non-minimal":          {[]byte{1, 0x80, 0x00}, "non-minimal varint"},
		"field too long":       {[]byte{1, 0x05, 'a'}, "field of 5 bytes but only 1 left"},
		"huge field":           {[]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "but only 0 left"},
		"no recipient":         {encodeRecord(7, &diag.ParentMessage{At: t0}), "no recipient"},
		"nanoseconds 1e9":      {append(bytes.Clone(v1[:len(v1)-4]), 0x80, 0x94, 0xeb, 0xdc, 0x03), "nanoseconds 1000000000 out of range"},
		"v2 year out of JSON":  {encodeRecord(7, &diag.ParentMessage{Recipient: "/r", At: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)}), "outside years 0 to 9999"},
		"v1 year out of JSON":  {encodeRecordV1(nil, &diag.ParentMessage{Recipient: "/r", At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}), "outside years 0 to 9999"},
		"v2 untrusted→TRUSTED": {bytes.Replace(rec, []byte("untrusted"), []byte("TRUSTED!!"), 1), "checksum mismatch"},
	} {
		m, checked, err := decodeRecord(7, c.data)
		if err == nil {
			t.Errorf("%s: decoded", name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q", name, err, c.want)
		}
		if checked || m != (diag.ParentMessage{}) {
			t.Errorf("%s: checked %v, message %+v with the error", name, checked, m)
		}
		if strings.Contains(c.want, "checksum mismatch") != errors.Is(err, errChecksum) {
			t.Errorf("%s: errors.Is(errChecksum) = %v", name, errors.Is(err, errChecksum))
		}
	}
}

func flipBit(b []byte, bit int) []byte {
	b = bytes.Clone(b)
	b[bit/8] ^= 1 << (bit % 8)
	return b
}

func TestRecordRoundTrip(t *testing.T) {
	for _, m := range []diag.ParentMessage{
		msg("/root", "/root/x", "m", 0),
		{Recipient: "/r", At: time.Time{}},
		{Recipient: "/r", Level: diag.Info, At: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Recipient: "/r", At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{Recipient: "/r", At: time.Unix(0, 0)},
		{Recipient: "/r", At: time.Unix(-1, 999999999)},
	} {
		for _, id := range []uint64{0, 1, math.MaxUint64} {
			got, checked, err := decodeRecord(id, encodeRecord(id, &m))
			if err != nil || !checked || !sameMessage(got, m) || got.At.Location() != time.UTC {
				t.Errorf("v2 %+v: decoded %+v, checked %v, %v", m, got, checked, err)
			}
		}
		got, checked, err := decodeRecord(1, encodeRecordV1(nil, &m))
		if err != nil || checked || !sameMessage(got, m) || got.At.Location() != time.UTC {
			t.Errorf("v1 %+v: decoded %+v, checked %v, %v", m, got, checked, err)
		}
	}
}

// Every single-bit flip of a version 2 record, anywhere in it, is caught.
func TestRecordEveryBitFlip(t *testing.T) {
	m := msg("/root", "/root/x", "every bit", 3)
	rec := encodeRecord(42, &m)
	for bit := range 8 * len(rec) {
		if _, _, err := decodeRecord(42, flipBit(rec, bit)); err == nil {
			t.Fatalf("bit %d flipped: decoded", bit)
		}
	}
}

// FuzzRecord: any id and bytes decode to a message or an error, never a
// panic; a decoded message is valid and encodes back, in the version it
// was read in, to exactly the same bytes (one encoding per message); a
// version 2 record is checked, and any one bit flipped in it is refused.
func FuzzRecord(f *testing.F) {
	m := msg("/root", "/root/x", "m", 0)
	f.Add(uint64(1), encodeRecord(1, &m))
	f.Add(uint64(1), encodeRecordV1(nil, &m))
	f.Add(uint64(9), encodeRecord(9, &diag.ParentMessage{Recipient: "/r", At: time.Unix(-1, 5)}))
	f.Add(uint64(0), []byte{})
	f.Add(uint64(0), []byte{1})
	f.Add(uint64(0), []byte{2, 0, 0, 0, 0})
	f.Add(uint64(0), []byte{1, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, id uint64, data []byte) {
		m, checked, err := decodeRecord(id, data)
		if err != nil {
			if m != (diag.ParentMessage{}) || checked {
				t.Fatalf("error %v with checked %v, message %+v", err, checked, m)
			}
			return
		}
		if err := validate(&m); err != nil {
			t.Fatalf("decoded an invalid message: %v", err)
		}
		if m.At.Location() != time.UTC {
			t.Fatalf("At in %v", m.At.Location())
		}
		var again []byte
		switch data[0] {
		case recordV1:
			if checked {
				t.Fatal("a version 1 record reported checked")
			}
			again = encodeRecordV1(nil, &m)
		case recordV2:
			if !checked {
				t.Fatal("a version 2 record reported unchecked")
			}
			again = encodeRecord(id, &m)
			if !recordIs(data[:len(data)-crcSize], &m) {
				t.Fatal("recordIs refuses a record that decodes to the message")
			}
			bit := int(id % uint64(8*len(data)))
			if _, _, err := decodeRecord(id, flipBit(data, bit)); err == nil {
				t.Fatalf("bit %d flipped: still decodes", bit)
			}
		default:
			t.Fatalf("decoded version %d", data[0])
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoded\n %x\nfrom\n %x", again, data)
		}
	})
}

// FuzzRecordRoundTrip: every message validate accepts comes back from
// encode then decode, in both versions, with the same fields and the same
// instant, in UTC.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add("/root", "/root/x", "text", "warning", "lint", "message", int64(1748779200), uint32(123456789), 3600)
	f.Add("/k", "", "", "", "", "", int64(-62135596800), uint32(0), 0)
	f.Add("\x00\xff", "\x1b[31m", "\u202e", "x", "", "é", int64(math.MaxInt64), uint32(math.MaxUint32), -1)
	f.Fuzz(func(t *testing.T, recipient, from, text, level, source, message string, sec int64, nsec uint32, zoneOffset int) {
		m := diag.ParentMessage{
			Recipient: recipient, From: from, Text: text, Level: diag.Level(level),
			Source: source, Message: message,
			At: time.Unix(sec, int64(nsec%1e9)).In(time.FixedZone("Z", zoneOffset%(24*3600))),
		}
		if validate(&m) != nil {
			return
		}
		if !recordIs(encodeBody(nil, &m), &m) {
			t.Fatalf("recordIs(encodeBody(%+v)) is false", m)
		}
		other := m
		other.Message += "x"
		if recordIs(encodeBody(nil, &other), &m) {
			t.Fatal("recordIs accepts another message's record")
		}
		other = m
		other.At = m.At.Add(time.Nanosecond)
		if validate(&other) == nil && recordIs(encodeBody(nil, &other), &m) {
			t.Fatal("recordIs accepts another instant's record")
		}
		id := uint64(sec) ^ uint64(nsec)
		for v, rec := range [][]byte{encodeRecordV1(nil, &m), encodeRecord(id, &m)} {
			got, checked, err := decodeRecord(id, rec)
			if err != nil {
				t.Fatalf("v%d: decode(encode(%+v)): %v", v+1, m, err)
			}
			if !sameMessage(got, m) || got.At != m.At.UTC() || checked != (v == 1) {
				t.Fatalf("v%d: got %+v (checked %v), want %+v", v+1, got, checked, m)
			}
		}
	})
}

// withID is crc32.Update of the id's 8 bytes, big-endian, computed without
// the allocation crc32.Update costs.
func TestWithID(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for i := range 10000 {
		sum, id := rnd.Uint32(), rnd.Uint64()
		switch i {
		case 0:
			sum, id = 0, 0
		case 1:
			sum, id = math.MaxUint32, math.MaxUint64
		}
		if got, want := withID(sum, id), crc32.Update(sum, castagnoli(), binary.BigEndian.AppendUint64(nil, id)); got != want {
			t.Fatalf("withID(%08x, %d) = %08x, crc32.Update gives %08x", sum, id, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { sink = withID(1, 2) }); n != 0 {
		t.Fatalf("withID allocates %v times", n)
	}
}
