package mailbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// A stored record is compact binary, version 1:
//
//	0x01
//	uvarint length + bytes, for recipient, from, text, level, source, message
//	varint  At's Unix seconds
//	uvarint At's nanoseconds (< 1e9)
//
// Varints must be minimal and nothing may follow, so each message has exactly
// one encoding: decodeRecord accepts only what encodeRecord produces.
const recordVersion = 1

// encodeRecord appends m's record to dst. m must have passed validate.
func encodeRecord(dst []byte, m *relay.ParentMessage) []byte {
	dst = append(dst, recordVersion)
	for _, s := range [...]string{m.Recipient, m.From, m.Text, string(m.Level), m.Source, m.Message} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendVarint(dst, m.At.Unix())
	dst = binary.AppendUvarint(dst, uint64(m.At.Nanosecond()))
	return dst
}

// decodeRecord parses a record made by encodeRecord. It returns an error,
// never panics, for any other input. At comes back in UTC.
func decodeRecord(b []byte) (relay.ParentMessage, error) {
	var m relay.ParentMessage
	if len(b) == 0 {
		return m, errors.New("empty record")
	}
	if b[0] != recordVersion {
		return m, fmt.Errorf("unknown record version %d", b[0])
	}
	body := b[1:]
	r := recordReader{b: body, s: string(body)} // one copy; fields are substrings
	var fields [6]string
	for i := range fields {
		fields[i] = r.str()
	}
	sec := r.varint()
	nsec := r.uvarint()
	if r.err != nil {
		return m, r.err
	}
	if len(r.b) != 0 {
		return m, fmt.Errorf("%d bytes after the record", len(r.b))
	}
	if nsec >= 1e9 {
		return m, fmt.Errorf("nanoseconds %d out of range", nsec)
	}
	m = relay.ParentMessage{
		Recipient: fields[0],
		From:      fields[1],
		Text:      fields[2],
		Level:     diag.Level(fields[3]),
		Source:    fields[4],
		Message:   fields[5],
		At:        time.Unix(sec, int64(nsec)).UTC(),
	}
	if err := validate(&m); err != nil {
		return relay.ParentMessage{}, err
	}
	return m, nil
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
