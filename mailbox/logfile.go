package mailbox

import (
	"bytes"
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
// flushes data alone; no commit runs past it (maxLog). Variables so that tests can make
// checkpoints happen often.
var (
	logPrealloc  int64 = 4 << 20
	checkpointAt int64 = 2 << 20
)

// maxLog is the bound on one epoch of the log: a commit that would pass
// it waits for a checkpoint to begin the next epoch (makeRoom). At most
// the preallocated size, so the log's files never grow.
func maxLog() int64 { return min(2*checkpointAt, logPrealloc) }

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
		// In pieces, so that making a log does not leave megabytes of
		// garbage in a service that is then idle.
		zeros := make([]byte, 64<<10)
		for at := fi.Size(); at < logPrealloc && err == nil; at += int64(len(zeros)) {
			_, err = f.WriteAt(zeros[:min(int64(len(zeros)), logPrealloc-at)], at)
		}
		if err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mailbox: log %s: %w", path, err)
	}
	return &logFile{f: f, path: path}, nil
}

// readLog reads the whole log at path if its first frame's header names
// epoch; otherwise, and if the log is missing, it reads as empty, which
// scanLog takes exactly as it would the bytes (no frame of epoch, a clean
// end). So the usual start, after a clean stop, reads one header, not
// megabytes that would stay in the idle service's memory.
func readLog(path string, epoch uint64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var h [frameHeader]byte
	if _, err := io.ReadFull(f, h[:]); err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if !namesEpoch(h[:], epoch) {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:n], err
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
