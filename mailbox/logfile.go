package mailbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// logPrealloc is the size the log is given by writing zeros when it is
// made, and checkpointAt the tail past which a commit is followed by a
// checkpoint (docs/mailbox.md, "One flush a commit"). Appends below
// logPrealloc overwrite blocks the file already has, so their fdatasync
// flushes data alone; a commit that runs past it grows the file, and its
// fdatasync flushes the new size too. Variables so that tests can make
// checkpoints happen often.
var (
	logPrealloc  int64 = 4 << 20
	checkpointAt int64 = 2 << 20
)

// logWritten, if not nil, is called after a commit's frames are written
// and flushed and before they are read back: the tests' cue to damage them.
var logWritten func(f *os.File, off int64, n int)

// LogPaths are the log's two files beside the mailbox file at path: its
// name with ".log.0" and ".log.1" for ".db" (DIR/mailbox.log.0 and
// DIR/mailbox.log.1 for DIR/mailbox.db). Epoch e is written in the file
// e % 2, so that a checkpoint of one epoch can run while the next is
// written (docs/mailbox.md, "One flush a commit").
func LogPaths(path string) [2]string {
	base := strings.TrimSuffix(path, ".db") + ".log."
	return [2]string{base + "0", base + "1"}
}

// logFile is one of the log's open files. Only the commit leader (or
// Open and Close, alone) uses it.
type logFile struct {
	f    *os.File
	path string
	seq  uint64 // of the last frame written in the epoch
	tail int64  // where the next frame goes
	// broken is set when the log may hold, before tail, bytes that replay
	// would stop at (a failed write or flush, a frame that did not read
	// back): nothing may be appended until a checkpoint has started the
	// next epoch, or later frames would be lost to replay.
	broken bool
	check  []byte // read-back buffer, reused
	// noSync skips the fdatasync. Only bench_test.go sets it, to measure
	// a commit's CPU without the disk's latency.
	noSync bool
}

// openLog opens the log at path for writing, making it (preallocated
// with zeros, flushed, its name made durable) if it is missing or growing
// it to logPrealloc if a crash cut its making short.
func openLog(path string) (*logFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = syncDir(filepath.Dir(path))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mailbox: log %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if err == nil && fi.Size() < logPrealloc {
		// Zeros written, not a hole or fallocate: an unwritten extent
		// is turned into a written one at the first write, and that
		// change of the file's metadata would have to be flushed.
		if _, err = f.WriteAt(make([]byte, logPrealloc-fi.Size()), fi.Size()); err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mailbox: log %s: %w", path, err)
	}
	return &logFile{f: f, path: path}, nil
}

// readLog reads the whole log at path; a missing log reads as empty.
func readLog(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// logScan is what scanLog found in a log's bytes.
type logScan struct {
	frames []frame
	end    int64 // where the log's last frame ends
	// torn is true when the bytes at end begin a frame of the epoch that
	// fails its checks: a commit that a crash cut short (nothing of it
	// was answered). damaged is set when a frame of a later commit of the
	// epoch follows such a frame: damage to bytes that were flushed,
	// which replay cannot pass.
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
		b, err := readLog(paths[epoch%2])
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

// probeTail looks at the bytes after the log's last frame, where frame
// seq would be. All zeros, or a frame header of another epoch, is a clean
// end. A header of this epoch is a torn commit; if, taking its length at
// its word, the next frame is whole, of this epoch and of a later commit
// than seq's, then seq's commit was flushed before that one was written:
// the bytes were damaged afterwards. (A damaged length hides this; the
// damage then reads as a torn tail.)
func probeTail(b []byte, epoch, seq uint64) (torn bool, damaged error) {
	if len(b) < frameHeader || int(b[0]) < framePost || int(b[0]) > frameAck || binary.BigEndian.Uint64(b[1:]) != epoch {
		return false, nil
	}
	next := frameOver + int64(binary.BigEndian.Uint32(b[25:]))
	if next <= 0 || next > int64(len(b)) {
		return true, nil
	}
	f, _, err := decodeFrame(b[next:])
	if err == nil && f.epoch == epoch && f.batch > seq {
		return true, fmt.Errorf("frame %d of epoch %d is damaged, and commits after it were written", seq, epoch)
	}
	return true, nil
}

// append writes frames (whole encoded frames, the first of which starts
// at byte 0) at the tail, flushes them (one fdatasync) and reads them
// back. It returns the number of bytes of frames, from the first, that
// read back as written: len(frames) unless something went wrong, in
// which case err says what and the log is broken until a checkpoint.
func (l *logFile) append(frames []byte) (good int, err error) {
	if _, err := l.f.WriteAt(frames, l.tail); err != nil {
		l.broken = true
		return 0, fmt.Errorf("mailbox: log %s: write: %w", l.path, err)
	}
	if err := l.sync(); err != nil {
		// After a failed flush the kernel may have dropped the pages it
		// could not write: what the file holds is unknown.
		l.broken = true
		return 0, fmt.Errorf("mailbox: log %s: fdatasync: %w", l.path, err)
	}
	if logWritten != nil {
		logWritten(l.f, l.tail, len(frames))
	}
	if cap(l.check) < len(frames) {
		l.check = make([]byte, len(frames))
	}
	check := l.check[:len(frames)]
	_, rerr := l.f.ReadAt(check, l.tail)
	if rerr == io.EOF {
		rerr = nil
	}
	at := l.tail
	l.tail += int64(len(frames))
	if rerr == nil && bytes.Equal(check, frames) {
		return len(frames), nil
	}
	l.broken = true
	// The frames are whole in frames: find the first that differs.
	for good < len(frames) {
		_, n, _ := decodeFrame(frames[good:])
		if n == 0 || rerr != nil || !bytes.Equal(check[good:good+n], frames[good:good+n]) {
			break
		}
		good += n
	}
	if rerr != nil {
		return good, fmt.Errorf("mailbox: log %s: reading back: %w", l.path, rerr)
	}
	return good, fmt.Errorf("%w: log %s: the frame at byte %d did not read back as written", ErrCorrupt, l.path, at+int64(good))
}

func (l *logFile) sync() error {
	if l.noSync {
		return nil
	}
	return fdatasync(l.f)
}

func (l *logFile) close() error { return l.f.Close() }
