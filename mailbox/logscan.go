package mailbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// logScan is what scanLog found in a log's bytes.
type logScan struct {
	frames []frame
	end    int64 // where the log's last frame ends
	// torn is true when the bytes at end name the epoch but are no
	// frame: a commit that a crash cut short (nothing of it was
	// answered). damaged is set when a whole frame of a later commit of
	// the epoch follows them (probeTail): damage to bytes that were
	// flushed, which replay cannot pass.
	torn    bool
	damaged error
}

// scanEpochs reads the log's files (paths, as LogPaths gives them) for
// the epochs after mark: mark+1 in its file, then mark+2 in the other. The
// second exists only if the first was frozen for a checkpoint after its
// last commit was flushed and read back, so the first cannot then end in
// a torn commit: if it seems to, a flushed frame was damaged, and
// damaged says so.
func scanEpochs(paths [2]string, mark uint64) (logScan, error) {
	var all logScan
	var scans [2]logScan
	for k := range scans {
		epoch := mark + 1 + uint64(k)
		b, err := readLog(paths[epoch%2], epoch)
		if err != nil {
			return all, fmt.Errorf("mailbox: log %s: %w", paths[epoch%2], err)
		}
		scans[k] = scanLog(b, epoch)
		if scans[k].damaged != nil {
			return logScan{damaged: fmt.Errorf("log %s: %v", paths[epoch%2], scans[k].damaged)}, nil
		}
	}
	if scans[0].torn && len(scans[1].frames) > 0 {
		return logScan{damaged: fmt.Errorf("log %s: the last frame of epoch %d is damaged, and epoch %d was begun after it was flushed",
			paths[(mark+1)%2], mark+1, mark+2)}, nil
	}
	all.frames = append(scans[0].frames, scans[1].frames...)
	all.torn = scans[0].torn || scans[1].torn
	return all, nil
}

// scanLog returns the frames of epoch in b: those from the start with
// seq 1, 2, ... and the same epoch, up to the first that is not.
func scanLog(b []byte, epoch uint64) logScan {
	var sc logScan
	off := 0
	for {
		f, n, err := decodeFrame(b[off:])
		if err != nil || f.epoch != epoch || f.seq != uint64(len(sc.frames))+1 {
			break
		}
		sc.frames = append(sc.frames, f)
		off += n
	}
	sc.end = int64(off)
	sc.torn, sc.damaged = probeTail(b[off:], epoch, uint64(len(sc.frames))+1)
	return sc
}

// probeTail looks at the bytes b after the log's last frame, where frame
// seq of epoch would be. All zeros, or a frame of another epoch, is a
// clean end. Bytes that name this epoch are a torn commit (torn), unless
// a whole frame of a later commit of the epoch follows them somewhere in
// b (findLater): that commit was written only after seq's commit was
// flushed, so seq's bytes were damaged afterwards (damaged). The epoch's
// field itself damaged hides this: the end then reads as clean.
func probeTail(b []byte, epoch, seq uint64) (torn bool, damaged error) {
	if !namesEpoch(b, epoch) {
		return false, nil
	}
	if at, err := findLater(b, epoch, seq); err != nil || at > 0 {
		if err == nil {
			err = fmt.Errorf("a frame of a later commit follows it, %d bytes on", at)
		}
		return true, fmt.Errorf("frame %d of epoch %d is damaged: %v", seq, epoch, err)
	}
	return true, nil
}

// namesEpoch reports whether b holds a whole frame header whose epoch
// field is epoch: bytes that could be a frame of the epoch, whole or torn.
func namesEpoch(b []byte, epoch uint64) bool {
	return len(b) >= frameHeader && binary.BigEndian.Uint64(b[1:]) == epoch
}

// maxCandidates bounds the checksums findLater computes: in a torn tail
// nothing passes its cheap tests (frames of the torn commit are of its
// batch, stale frames of another epoch), so a few candidates already say
// the bytes are not a torn commit's.
const maxCandidates = 64

// findLater returns where in b, after its start, a whole frame of epoch
// begins whose commit is later than frame seq's (batch > seq), or 0 if
// there is none. Its cost is one pass over b and at most maxCandidates
// checksums: a byte offset is a candidate only if its header could be
// such a frame's (its kind, epoch, a seq no further past seq than frames
// fit between, a batch between, a length that fits).
func findLater(b []byte, epoch, seq uint64) (int, error) {
	candidates := 0
	want := binary.BigEndian.AppendUint64(nil, epoch)
	for i := 1; i+frameOver <= len(b); i++ {
		k := bytes.Index(b[i+1:], want) // the epoch field, found fast
		if k < 0 {
			break
		}
		i += k
		h := b[i:]
		if len(h) < frameOver || h[0] < framePost || h[0] > frameAck {
			continue
		}
		fseq, batch := binary.BigEndian.Uint64(h[9:]), binary.BigEndian.Uint64(h[17:])
		size := int64(binary.BigEndian.Uint32(h[25:]))
		if fseq <= seq || fseq-seq > uint64(i/frameOver) || batch <= seq || batch > fseq ||
			size > maxFramePayload || frameOver+size > int64(len(h)) {
			continue
		}
		if candidates++; candidates > maxCandidates {
			return 0, fmt.Errorf("more than %d frame headers of later commits follow it", maxCandidates)
		}
		if f, _, err := decodeFrame(h); err == nil && f.epoch == epoch && f.batch > seq {
			return i, nil
		}
	}
	return 0, nil
}
