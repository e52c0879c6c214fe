package mailbox

import (
	"bytes"
	"reflect"
	"testing"
)

// seedFrames are valid frames of each kind, for the tests and the fuzz
// target's seeds.
func seedFrames() []frame {
	m := msg("/root", "/root/x", "m", 0)
	rec := encodeRecord(7, &m)
	return []frame{
		{kind: framePost, epoch: 1, seq: 1, batch: 1, id: 7, recipient: "/root", rec: rec},
		{kind: frameOnce, epoch: 3, seq: 5, batch: 4, id: 8, recipient: "/root", once: "edge 42", onceSeq: 42, rec: rec},
		{kind: frameAck, epoch: 1 << 40, seq: 9, batch: 9, recipient: "/k", ids: []uint64{1, 2, 1 << 63}},
	}
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range seedFrames() {
		enc := appendFrame([]byte("prefix"), &f)[len("prefix"):]
		got, n, err := decodeFrame(append(enc, 0, 0, 0))
		if err != nil || n != len(enc) || !reflect.DeepEqual(got, f) {
			t.Fatalf("decode(encode(%+v)) = %+v, %d of %d bytes, %v", f, got, n, len(enc), err)
		}
		for i := range enc {
			bad := bytes.Clone(enc)
			bad[i] ^= 0x10
			if _, _, err := decodeFrame(bad); err == nil {
				t.Fatalf("kind %d: a frame with byte %d changed was accepted", f.kind, i)
			}
		}
		if _, _, err := decodeFrame(enc[:len(enc)-1]); err == nil {
			t.Fatalf("kind %d: a frame cut short was accepted", f.kind)
		}
	}
	if _, _, err := decodeFrame(make([]byte, 64)); err == nil {
		t.Fatal("zeros (the preallocated log) decoded as a frame")
	}
}

// FuzzLogFrame holds the log's frame decoder to its promises: it never
// panics; what it accepts is valid and is exactly what appendFrame writes
// for it (so decode(encode(x)) == x, one encoding per frame); and a frame
// with any byte changed, or cut short, is never accepted.
func FuzzLogFrame(f *testing.F) {
	for _, fr := range seedFrames() {
		f.Add(fr.kind, fr.epoch, fr.seq, fr.batch, fr.id, fr.recipient, fr.once, fr.onceSeq, fr.rec, uint16(len(fr.ids)), uint32(5), appendFrame(nil, &fr))
	}
	f.Add(byte(0), uint64(0), uint64(0), uint64(0), uint64(0), "", "", uint64(0), []byte{}, uint16(0), uint32(0), []byte{})
	f.Fuzz(func(t *testing.T, kind byte, epoch, seq, batch, id uint64, recipient, once string, onceSeq uint64, rec []byte, nIDs uint16, flip uint32, raw []byte) {
		if got, n, err := decodeFrame(raw); err == nil {
			if !validFrame(&got) {
				t.Fatalf("accepted an invalid frame %+v", got)
			}
			if again := appendFrame(nil, &got); !bytes.Equal(again, raw[:n]) {
				t.Fatalf("accepted %x, which encodes as %x", raw[:n], again)
			}
		} else if n != 0 || got.kind != 0 {
			t.Fatalf("error %v with a frame %+v of %d bytes", err, got, n)
		}

		fr := frame{kind: framePost + kind%3, epoch: epoch, seq: seq, batch: batch, recipient: recipient}
		switch fr.kind {
		case frameAck:
			for i := range uint64(nIDs%300 + 1) {
				fr.ids = append(fr.ids, id+i*onceSeq)
			}
		case frameOnce:
			fr.once, fr.onceSeq = once, onceSeq
			fallthrough
		case framePost:
			fr.id, fr.rec = id, rec
		}
		if !validFrame(&fr) {
			return
		}
		enc := appendFrame(nil, &fr)
		got, n, err := decodeFrame(append(bytes.Clone(enc), raw...))
		if err != nil || n != len(enc) || !reflect.DeepEqual(got, fr) {
			t.Fatalf("decode(encode(%+v)) = %+v, %d of %d bytes, %v", fr, got, n, len(enc), err)
		}
		bad := bytes.Clone(enc)
		bad[int(flip)%len(bad)] ^= byte(flip>>24) | 1
		if _, _, err := decodeFrame(bad); err == nil {
			t.Fatalf("accepted a damaged frame: byte %d of %x changed to %x", int(flip)%len(bad), enc, bad)
		}
		if _, _, err := decodeFrame(enc[:int(flip>>8)%len(enc)]); err == nil {
			t.Fatalf("accepted a frame cut to %d of %d bytes", int(flip>>8)%len(enc), len(enc))
		}
	})
}
