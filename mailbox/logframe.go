package mailbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A frame is one operation in the mailbox's log (DIR/mailbox.log.0 and .1,
// docs/mailbox.md "One flush a commit"). All integers are big-endian:
//
//	kind     1 byte: framePost, frameOnce or frameAck
//	epoch    8 bytes: the log's generation; a checkpoint starts the next
//	seq      8 bytes: 1 for the epoch's first frame, then one more each
//	batch    8 bytes: seq of the first frame of the same group commit
//	length   4 bytes: of the payload
//	payload  length bytes, by kind:
//	  post   id (8), uvarint length + recipient, the record (record.go)
//	  once   id (8), uvarint length + recipient, uvarint length + once id,
//	         stream sequence (8), the record
//	  ack    uvarint length + recipient, uvarint count, count ids (8 each)
//	crc      4 bytes: CRC-32C of every byte before it
//
// A frame of the epoch after the last checkpoint's, whose seq is the next
// one expected, is part of the log; replay stops at the first that is not
// (stale bytes of an earlier epoch, zeros of the preallocated file, or a
// write that a crash cut short). Varints must be minimal and nothing may
// follow an ack's ids, so decodeFrame accepts exactly what appendFrame
// writes.
const (
	framePost = 1
	frameOnce = 2
	frameAck  = 3

	frameHeader = 1 + 8 + 8 + 8 + 4
	frameOver   = frameHeader + crcSize
	// maxFramePayload bounds a payload: a post is at most a record of
	// MaxMessageBytes and its overhead; acks are split (maxAckIDs).
	maxFramePayload = 1 << 20
	// maxAckIDs bounds the ids of one ack frame; an Ack of more writes
	// several frames.
	maxAckIDs = 8192
)

// frame is one decoded log frame. Which fields mean something depends on
// kind (see above); the others are zero.
type frame struct {
	kind              byte
	epoch, seq, batch uint64
	id                uint64 // post, once
	recipient         string
	once              string // once
	onceSeq           uint64 // once
	rec               []byte // post, once: the sealed record
	ids               []uint64
}

var errFrame = errors.New("not a log frame")

// appendFrame appends f's encoding to dst. f must be valid (validFrame).
func appendFrame(dst []byte, f *frame) []byte {
	start := len(dst)
	dst = append(dst, f.kind)
	dst = binary.BigEndian.AppendUint64(dst, f.epoch)
	dst = binary.BigEndian.AppendUint64(dst, f.seq)
	dst = binary.BigEndian.AppendUint64(dst, f.batch)
	dst = append(dst, 0, 0, 0, 0) // the length, set below
	body := len(dst)
	switch f.kind {
	case framePost, frameOnce:
		dst = binary.BigEndian.AppendUint64(dst, f.id)
		dst = appendString(dst, f.recipient)
		if f.kind == frameOnce {
			dst = appendString(dst, f.once)
			dst = binary.BigEndian.AppendUint64(dst, f.onceSeq)
		}
		dst = append(dst, f.rec...)
	case frameAck:
		dst = appendString(dst, f.recipient)
		dst = binary.AppendUvarint(dst, uint64(len(f.ids)))
		for _, id := range f.ids {
			dst = binary.BigEndian.AppendUint64(dst, id)
		}
	}
	binary.BigEndian.PutUint32(dst[body-4:], uint32(len(dst)-body))
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli()))
}

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// validFrame reports whether f can be written: the bounds decodeFrame
// holds every frame to.
func validFrame(f *frame) bool {
	if f.seq == 0 || f.batch == 0 || f.batch > f.seq || f.recipient == "" || len(f.recipient) > MaxRecipientBytes {
		return false
	}
	switch f.kind {
	case framePost, frameOnce:
		if len(f.rec) == 0 || f.ids != nil || (f.kind == framePost && (f.once != "" || f.onceSeq != 0)) {
			return false
		}
		if f.kind == frameOnce && (f.once == "" || len(f.once) > MaxOnceID) {
			return false
		}
		return frameHeader+8+2*binary.MaxVarintLen64+len(f.recipient)+len(f.once)+8+len(f.rec) <= maxFramePayload
	case frameAck:
		return len(f.ids) > 0 && len(f.ids) <= maxAckIDs && f.id == 0 && f.once == "" && f.onceSeq == 0 && f.rec == nil
	}
	return false
}

// decodeFrame decodes the frame at the start of b and returns it and its
// length. It returns an error, never panics, for anything appendFrame
// would not have written; the returned frame's strings and slices are
// copies, not views of b.
func decodeFrame(b []byte) (f frame, n int, err error) {
	if len(b) < frameOver {
		return f, 0, fmt.Errorf("%w: %d bytes, too short", errFrame, len(b))
	}
	f.kind = b[0]
	if f.kind < framePost || f.kind > frameAck {
		return frame{}, 0, fmt.Errorf("%w: kind %d", errFrame, f.kind)
	}
	f.epoch = binary.BigEndian.Uint64(b[1:])
	f.seq = binary.BigEndian.Uint64(b[9:])
	f.batch = binary.BigEndian.Uint64(b[17:])
	size := binary.BigEndian.Uint32(b[25:])
	if size > maxFramePayload || int(size) > len(b)-frameOver {
		return frame{}, 0, fmt.Errorf("%w: a payload of %d bytes does not fit", errFrame, size)
	}
	n = frameOver + int(size)
	if sum := crc32.Checksum(b[:n-crcSize], castagnoli()); sum != binary.BigEndian.Uint32(b[n-crcSize:]) {
		return frame{}, 0, fmt.Errorf("%w: checksum mismatch", errFrame)
	}
	p := payloadReader{b: b[frameHeader : n-crcSize]}
	switch f.kind {
	case framePost, frameOnce:
		f.id = p.u64()
		f.recipient = p.str(MaxRecipientBytes)
		if f.kind == frameOnce {
			f.once = p.str(MaxOnceID)
			f.onceSeq = p.u64()
		}
		if p.err == nil {
			f.rec = append([]byte(nil), p.b...)
			p.b = nil
		}
	case frameAck:
		f.recipient = p.str(MaxRecipientBytes)
		count := p.uvarint()
		if p.err == nil && (count == 0 || count > maxAckIDs || count*8 != uint64(len(p.b))) {
			p.err = fmt.Errorf("%d ids in %d bytes", count, len(p.b))
		}
		for i := uint64(0); p.err == nil && i < count; i++ {
			f.ids = append(f.ids, p.u64())
		}
	}
	if p.err == nil && len(p.b) != 0 {
		p.err = fmt.Errorf("%d bytes after the payload", len(p.b))
	}
	if p.err == nil && !validFrame(&f) {
		p.err = errors.New("out of bounds")
	}
	if p.err != nil {
		return frame{}, 0, fmt.Errorf("%w: %v", errFrame, p.err)
	}
	return f, n, nil
}

// payloadReader consumes a payload; the first error sticks.
type payloadReader struct {
	b   []byte
	err error
}

func (p *payloadReader) u64() uint64 {
	if p.err != nil {
		return 0
	}
	if len(p.b) < 8 {
		p.err = errors.New("truncated")
		return 0
	}
	v := binary.BigEndian.Uint64(p.b)
	p.b = p.b[8:]
	return v
}

func (p *payloadReader) uvarint() uint64 {
	if p.err != nil {
		return 0
	}
	v, k := minimalUvarint(p.b)
	if k <= 0 {
		p.err = errors.New("bad varint")
		return 0
	}
	p.b = p.b[k:]
	return v
}

func (p *payloadReader) str(limit int) string {
	n := p.uvarint()
	if p.err == nil && (n == 0 || n > uint64(limit) || n > uint64(len(p.b))) {
		p.err = fmt.Errorf("a string of %d bytes", n)
	}
	if p.err != nil {
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}
