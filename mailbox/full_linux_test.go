package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// limitFileSize lowers the process's RLIMIT_FSIZE to n bytes until the
// returned function (also a cleanup) restores it: the kernel then fails
// every write and truncate past byte n with EFBIG, as a full disk fails
// them with ENOSPC. (The runtime ignores the SIGXFSZ that comes with it.)
func limitFileSize(t *testing.T, n int64) (restore func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(n), Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	restore = sync.OnceFunc(func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(restore)
	return restore
}

// fullEnv names the file TestLogFullHelperProcess works on; when it is
// unset the helper is skipped.
const fullEnv = "DIAGRELAY_MAILBOX_FULL_FILE"

// When the bbolt file cannot be written (here it cannot grow), every
// checkpoint fails. The log and what is pending in memory stop at their
// bound (the log's file never grows past its preallocated size); from
// then on Post, PostOnce and Ack fail with ErrLogFull, counted in Refused,
// storing nothing; what was stored before is all there; once a checkpoint
// can be made again, posts go on. The file size limit applies to the
// whole process, so the test runs in a process of its own (the helper),
// which ends without closing the Store; this one then opens the file.
func TestLogFullWhenCheckpointsFail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogFullHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fullEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var want int
	var from uint64
	at := bytes.Index(out, []byte("WANT "))
	if err != nil || at < 0 {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if _, err := fmt.Sscanf(string(out[at:]), "WANT %d FROM %d", &want, &from); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	s := openStore(t, path)
	if got := mustRead(t, s, "/root", 0); len(got) != want || got[0].ID != from {
		t.Fatalf("after the helper: %d entries from %d, want %d from %d", len(got), got[0].ID, want, from)
	}
}

// TestLogFullHelperProcess is not a test: TestLogFullWhenCheckpointsFail
// runs it in a subprocess.
func TestLogFullHelperProcess(t *testing.T) {
	path := os.Getenv(fullEnv)
	if path == "" {
		t.Skip("a helper of TestLogFullWhenCheckpointsFail")
	}
	defer func(p, at int64) { logPrealloc, checkpointAt = p, at }(logPrealloc, checkpointAt)
	logPrealloc, checkpointAt = 64<<10, 16<<10
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustPost(t, s, msg("/root", "/root/x", "before", 0))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	restore := limitFileSize(t, max(fi.Size(), logPrealloc))
	posted := 1
	for ; posted < 2000; posted++ {
		if err = s.Post(msg("/root", "/root/x", "m", posted)); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrLogFull) {
		t.Fatalf("after %d posts, with the log at byte %d of epoch %d: %v, want ErrLogFull", posted, s.log.tail, s.epoch, err)
	}
	for _, p := range LogPaths(path) {
		if fi, err := os.Stat(p); err != nil || fi.Size() != logPrealloc {
			t.Fatalf("log %s: %v, %v: want %d bytes", p, fi.Size(), err, logPrealloc)
		}
	}
	if s.log.tail > maxLog() || s.frozen == nil {
		t.Fatalf("the log's tail is %d, past its bound %d (frozen %v)", s.log.tail, maxLog(), s.frozen != nil)
	}
	if dup, err := s.PostOnce("edge 1", 1, msg("/root", "/root/x", "once", 0)); !errors.Is(err, ErrLogFull) || dup {
		t.Fatalf("PostOnce on a full log: %v, %v", dup, err)
	}
	es := mustRead(t, s, "/root", 0)
	if len(es) != posted {
		t.Fatalf("read %d entries, want the %d posted", len(es), posted)
	}
	// An ack's frame is smaller than a post's: acks may fit where the
	// last post did not, until they do not either.
	acked := 0
	for ; acked < len(es); acked++ {
		if n, err := s.Ack("/root", ids(es[acked:acked+1])); err != nil || n != 1 {
			if !errors.Is(err, ErrLogFull) || n != 0 {
				t.Fatalf("Ack on a full log: %d, %v", n, err)
			}
			break
		}
	}
	if st := s.Stats(); st.Refused != 3 || st.Posts != uint64(posted) {
		t.Fatalf("stats %+v: want 3 refused, %d posts", st, posted)
	}

	restore()
	mustPost(t, s, msg("/root", "/root/x", "after", 0))
	mustAck(t, s, "/root", ids(es[acked:acked+1]), 1)
	if dup, err := s.PostOnce("edge 1", 1, msg("/root", "/root/x", "once", 0)); err != nil || dup {
		t.Fatalf("PostOnce once checkpoints work again: %v, %v", dup, err)
	}
	want := posted - acked - 1 + 2 // and "after" and "once"
	if got := mustRead(t, s, "/root", 0); len(got) != want || got[0].ID != es[acked+1].ID {
		t.Fatalf("%d entries from %d, want %d from %d", len(got), got[0].ID, want, es[acked+1].ID)
	}
	fmt.Printf("WANT %d FROM %d\n", want, es[acked+1].ID)
	abandon(s)
}
