package mailbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Damage to any header field of a flushed frame but its epoch, its
// length included, with later commits after it, is refused by Open and
// reported by Check: not read as a torn tail, which would drop the later
// commits. The same damage to the last commit is a torn tail.
func TestLogDamagedHeader(t *testing.T) {
	for _, c := range []struct {
		name string
		at   int // the byte of the second frame's header changed
		last bool
	}{
		{"length", 25 + 2, false}, {"length-low", 25 + 3, false}, {"kind", 0, false}, {"seq", 16, false},
		{"batch", 24, false}, {"length-of-last", 25 + 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mailbox.db")
			s := openStore(t, path)
			n := 4
			if c.last {
				n = 2
			}
			for i := range n {
				mustPost(t, s, msg("/root", "/root/x", "m", i))
			}
			logPath := s.log.path
			abandon(s)
			log, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			_, first, err := decodeFrame(log)
			if err != nil {
				t.Fatal(err)
			}
			log[first+c.at] ^= 0x40
			if err := os.WriteFile(logPath, log, 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := Check(path)
			if err != nil {
				t.Fatal(err)
			}
			_, oerr := Open(path)
			if c.last {
				if !rep.Clean() || !rep.Log.TornTail || oerr != nil {
					t.Fatalf("the last commit damaged: Check %+v, log %+v; Open: %v", rep, rep.Log, oerr)
				}
				return
			}
			if rep.Clean() || rep.Log.Damaged == "" || !errors.Is(oerr, ErrCorrupt) {
				t.Fatalf("Check %+v, log %+v; Open: %v", rep, rep.Log, oerr)
			}
		})
	}
}

// findLater's cost is bounded: bytes full of frame headers that pass its
// cheap tests but fail their checksums are damage after maxCandidates.
func TestFindLaterBounded(t *testing.T) {
	rec := []byte{recordV2, 1, 2, 3}
	f := appendFrame(nil, &frame{kind: framePost, epoch: 7, seq: 2, batch: 2, id: 1, recipient: "/r", rec: rec})
	f[len(f)-1] ^= 1
	b := append(make([]byte, 40), bytes.Repeat(f, maxCandidates+1)...)
	if at, err := findLater(b, 7, 1); err == nil || at != 0 {
		t.Fatalf("findLater = %d, %v: want an error", at, err)
	}
	b = append(make([]byte, 40), bytes.Repeat(f, maxCandidates)...)
	if at, err := findLater(b, 7, 1); err != nil || at != 0 {
		t.Fatalf("findLater = %d, %v: want nothing found", at, err)
	}
}

// readLog reads a log only if its first header names the epoch scanned
// for, and what it skips scans exactly as the whole bytes would: no frame,
// a clean end.
func TestReadLogSkipsOtherEpochs(t *testing.T) {
	rec := []byte{recordV2, 1, 2, 3}
	f := appendFrame(nil, &frame{kind: framePost, epoch: 7, seq: 1, batch: 1, id: 1, recipient: "/r", rec: rec})
	path := filepath.Join(t.TempDir(), "log")
	for _, c := range []struct {
		name  string
		bytes []byte
	}{{"frame", f}, {"zeros", make([]byte, 4096)}, {"short", f[:5]}, {"empty", nil}} {
		if err := os.WriteFile(path, c.bytes, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, epoch := range []uint64{7, 8} {
			b, err := readLog(path, epoch)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.name == "frame" && epoch == 7; want != (len(b) > 0) {
				t.Errorf("%s, epoch %d: read %d bytes", c.name, epoch, len(b))
			}
			if got, whole := scanLog(b, epoch), scanLog(c.bytes, epoch); !sameScan(got, whole) {
				t.Errorf("%s, epoch %d: scan of what readLog read %+v, of the file %+v", c.name, epoch, got, whole)
			}
		}
	}
	if b, err := readLog(filepath.Join(t.TempDir(), "missing"), 1); b != nil || err != nil {
		t.Errorf("missing log: %q, %v", b, err)
	}
}

// sameScan reports whether two scans found the same: as many frames, the
// same end, torn or not, damaged or not.
func sameScan(a, b logScan) bool {
	return len(a.frames) == len(b.frames) && a.end == b.end && a.torn == b.torn && (a.damaged == nil) == (b.damaged == nil)
}

// FuzzReadLog: whatever a log file holds, what readLog reads of it for an
// epoch scans exactly as the file's bytes do.
func FuzzReadLog(f *testing.F) {
	rec := []byte{recordV2, 1, 2, 3}
	fr := appendFrame(nil, &frame{kind: framePost, epoch: 7, seq: 1, batch: 1, id: 1, recipient: "/r", rec: rec})
	f.Add(fr, uint64(7))
	f.Add(fr, uint64(8))
	f.Add(fr[:frameHeader], uint64(7))
	f.Add(make([]byte, 64), uint64(0))
	f.Fuzz(func(t *testing.T, raw []byte, epoch uint64) {
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := readLog(path, epoch)
		if err != nil {
			t.Fatal(err)
		}
		if got, whole := scanLog(b, epoch), scanLog(raw, epoch); !sameScan(got, whole) {
			t.Fatalf("scan of what readLog read %+v, of the file %+v", got, whole)
		}
	})
}

// While a Store has the file open, and after it stopped without Close,
// the file's tag is formatTagOpen, which a diagrelay that does not read
// the log refuses (it knows diagrelay-mailbox/3 only); Close's checkpoint
// takes it back to formatTag, and nothing is lost either way.
func TestFormatTagWhileLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	tag := func() string {
		rep, err := Check(path)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Format
	}
	s := openStore(t, path)
	mustPost(t, s, msg("/root", "/root/x", "m", 0))
	abandon(s)
	if got := tag(); got != string(formatTagOpen) {
		t.Fatalf("tag %q after a crash, want %q", got, formatTagOpen)
	}
	s = openStore(t, path)
	if got := len(mustRead(t, s, "/root", 0)); got != 1 {
		t.Fatalf("%d entries after the crash, want 1", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := tag(); got != string(formatTag) {
		t.Fatalf("tag %q after Close, want %q", got, formatTag)
	}
}
