package mailbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sync"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// A stored record is compact binary. Version 2, what Post writes:
//
//	0x02
//	uvarint length + bytes, for recipient, from, text, level, source, message
//	varint  At's Unix seconds
//	uvarint At's nanoseconds (< 1e9)
//	4 bytes CRC-32C (Castagnoli), big-endian, of every byte of the record
//	        before the checksum followed by the record's 8-byte key (its id)
//
// Version 1, written before checksums existed, is the same without the
// checksum. It still decodes, but nothing vouches for it: Check counts it
// as unchecked.
//
// The checksum covers the key too, so a record that turns up under another
// id (a damaged page) fails like a record whose bytes changed. Varints must
// be minimal and nothing may follow, so each message has exactly one
// encoding per version: decodeRecord accepts only what the encoders produce.
const (
	recordV1 = 1
	recordV2 = 2

	crcSize = 4
)

// castagnoli is the CRC-32C table, made on first use rather than at
// start-up: a diagrelay that never opens a mailbox never builds it.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// errChecksum is wrapped by decodeRecord's error for a version 2 record
// whose checksum does not match.
var errChecksum = errors.New("checksum mismatch")

// encodeBody appends the version 2 record of m without its checksum, with
// room for it; sealRecord adds it once the id is known. m must have passed
// validate.
func encodeBody(dst []byte, m *diag.ParentMessage) []byte {
	return appendFields(dst, recordV2, m)
}

// bodySum is the CRC-32C of body, the part of the checksum that needs no
// id: Post computes it in the poster's goroutine, outside the serial
// commit.
func bodySum(body []byte) uint32 { return crc32.Checksum(body, castagnoli()) }

// sealRecord appends to body (a whole record made by encodeBody, whose
// bodySum is sum) the checksum of body under id.
func sealRecord(body []byte, sum uint32, id uint64) []byte {
	return binary.BigEndian.AppendUint32(body, withID(sum, id))
}

// withID extends the CRC-32C sum of a body with id's 8-byte key (big-
// endian). It is crc32.Update(sum, castagnoli, key) a byte at a time from
// the same table, because crc32.Update's argument escapes (it calls
// through a function variable): the 8 bytes would cost every Post and
// every record read an allocation. TestWithID holds the two equal.
func withID(sum uint32, id uint64) uint32 {
	crc, table := ^sum, castagnoli()
	for shift := 56; shift >= 0; shift -= 8 {
		crc = table[byte(crc)^byte(id>>shift)] ^ crc>>8
	}
	return ^crc
}

func appendFields(dst []byte, version byte, m *diag.ParentMessage) []byte {
	n := len(dst) + 1 + 6*binary.MaxVarintLen64 + messageBytes(m) + 2*binary.MaxVarintLen64 + crcSize
	if cap(dst) < n {
		dst = append(make([]byte, 0, n), dst...)
	}
	dst = append(dst, version)
	for _, s := range [...]string{m.Recipient, m.From, m.Text, string(m.Level), m.Source, m.Message} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendVarint(dst, m.At.Unix())
	dst = binary.AppendUvarint(dst, uint64(m.At.Nanosecond()))
	return dst
}

// decodeRecord parses the record stored under id. checked reports whether
// a checksum vouched for it (version 2); a version 1 record decodes with
// checked false. It returns an error, never panics, for any other input,
// wrapping errChecksum when the checksum does not match. At comes back in
// UTC.
func decodeRecord(id uint64, b []byte) (m diag.ParentMessage, checked bool, err error) {
	if len(b) == 0 {
		return m, false, errors.New("empty record")
	}
	switch b[0] {
	case recordV1:
		m, err = decodeFields(b[1:])
		return m, false, err
	case recordV2:
		if len(b) < 1+crcSize {
			return m, false, fmt.Errorf("record of %d bytes is too short for its checksum", len(b))
		}
		body, stored := b[:len(b)-crcSize], binary.BigEndian.Uint32(b[len(b)-crcSize:])
		if sum := withID(bodySum(body), id); sum != stored {
			return m, false, fmt.Errorf("%w: stored %08x, computed %08x", errChecksum, stored, sum)
		}
		m, err = decodeFields(body[1:])
		return m, err == nil, err
	}
	return m, false, fmt.Errorf("unknown record version %d", b[0])
}

// decodeFields parses the fields after the version byte (and before the
// checksum) and validates the message.
func decodeFields(body []byte) (diag.ParentMessage, error) {
	r := recordReader{b: body, s: string(body)} // one copy; fields are substrings
	var fields [6]string
	for i := range fields {
		fields[i] = r.str()
	}
	sec := r.varint()
	nsec := r.uvarint()
	if r.err != nil {
		return diag.ParentMessage{}, r.err
	}
	if len(r.b) != 0 {
		return diag.ParentMessage{}, fmt.Errorf("%d bytes after the record", len(r.b))
	}
	if nsec >= 1e9 {
		return diag.ParentMessage{}, fmt.Errorf("nanoseconds %d out of range", nsec)
	}
	m := diag.ParentMessage{
		Recipient: fields[0],
		From:      fields[1],
		Text:      fields[2],
		Level:     diag.Level(fields[3]),
		Source:    fields[4],
		Message:   fields[5],
		At:        time.Unix(sec, int64(nsec)).UTC(),
	}
	if err := validate(&m); err != nil {
		return diag.ParentMessage{}, err
	}
	return m, nil
}

// recordIs reports whether body, a version 2 record without its checksum,
// decodes under decodeFields' rules to exactly m. It is that decoding
// without the copy and the allocations: Post runs it on every record.
func recordIs(body []byte, m *diag.ParentMessage) bool {
	if len(body) == 0 || body[0] != recordV2 {
		return false
	}
	b := body[1:]
	for _, want := range [...]string{m.Recipient, m.From, m.Text, string(m.Level), m.Source, m.Message} {
		n, k := minimalUvarint(b)
		if k <= 0 || n != uint64(len(want)) || n > uint64(len(b)-k) || string(b[k:k+int(n)]) != want {
			return false
		}
		b = b[k+int(n):]
	}
	sec, k1 := minimalUvarint(b)
	if k1 <= 0 {
		return false
	}
	nsec, k2 := minimalUvarint(b[k1:])
	unix := m.At.Unix()
	return k2 > 0 && len(b) == k1+k2 && sec == uint64(unix)<<1^uint64(unix>>63) && nsec == uint64(m.At.Nanosecond())
}

// minimalUvarint is binary.Uvarint refusing non-minimal encodings (n <= 0).
func minimalUvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n != max(1, (bits.Len64(v)+6)/7) {
		return 0, 0
	}
	return v, n
}

// recordReader consumes a record; the first error sticks and makes every
// later read return zero.
type recordReader struct {
	b   []byte // the rest of the record
	s   string // the whole record body, as a string
	off int    // where b starts in s
	err error
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated or overlong varint")
		return 0
	}
	if n != max(1, (bits.Len64(v)+6)/7) {
		r.err = errors.New("non-minimal varint")
		return 0
	}
	r.skip(n)
	return v
}

func (r *recordReader) varint() int64 {
	u := r.uvarint()
	// Zigzag, as binary.Varint does; decoding through uvarint keeps the
	// minimality check in one place.
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *recordReader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("field of %d bytes but only %d left", n, len(r.b))
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.skip(int(n))
	return s
}

func (r *recordReader) skip(n int) {
	r.b = r.b[n:]
	r.off += n
}
