package mailbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestStoreReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustPost(t, s, msg("/root", "/root/x", "m", i))
	}
	mustPost(t, s, msg("/k", "/k/l", "k", 5))
	before := mustRead(t, s, "/root", 0)
	mustAck(t, s, "/root", []uint64{before[0].ID}, 1)
	kBefore := mustRead(t, s, "/k", 0)
	mustAck(t, s, "/k", ids(kBefore), 1) // the highest id so far, acknowledged
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	after := mustRead(t, s, "/root", 0)
	if len(after) != 4 {
		t.Fatalf("after reopen %d entries, want 4", len(after))
	}
	for i, e := range after {
		if e.ID != before[i+1].ID || !sameMessage(e.ParentMessage, before[i+1].ParentMessage) {
			t.Fatalf("entry %d changed across reopen: %+v vs %+v", i, e, before[i+1])
		}
	}
	if got := len(mustRead(t, s, "/k", 0)); got != 0 {
		t.Fatalf("acknowledged /k entry back after reopen (%d)", got)
	}
	mustPost(t, s, msg("/k", "/k/l", "k", 6))
	if id := mustRead(t, s, "/k", 0)[0].ID; id <= kBefore[0].ID {
		t.Fatalf("id %d after reopen reuses or precedes id %d", id, kBefore[0].ID)
	}
}

func TestStoreClosed(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Post(msg("/root", "/root/x", "m", 0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Post after Close: %v", err)
	}
	if _, err := s.Read("/root", 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := s.Ack("/root", []uint64{1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ack after Close: %v", err)
	}
}

// Close during a stream of posts: every Post either returns nil and is in
// the file, or returns ErrClosed.
func TestStoreCloseWaitsForPosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := 0
	// Close comes once every poster has finished one Post, so that all
	// eight are posting (or about to) when it does.
	var started sync.WaitGroup
	started.Add(8)
	for p := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				err := s.Post(msg("/root", "/root/x", "m", p*1000+i))
				if i == 0 {
					started.Done()
				}
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				stored++
				mu.Unlock()
			}
		})
	}
	started.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s = openStore(t, path)
	if got := countEntries(t, s, "/root"); got != stored {
		t.Fatalf("%d in the file, %d Posts returned nil", got, stored)
	}
}

func TestStoreLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	first := openStore(t, path)
	start := time.Now()
	_, err := Open(path, WithLockTimeout(100*time.Millisecond))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second Open: %v, want ErrLocked naming the path", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("second Open took %v", waited)
	}
	if _, err := Open(path, WithLockTimeout(0)); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open with no wait: %v", err)
	}
	mustPost(t, first, msg("/root", "/root/x", "still works", 0))
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := openStore(t, path)
	if got := len(mustRead(t, second, "/root", 0)); got != 1 {
		t.Fatalf("got %d entries", got)
	}
}

func TestStoreOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	otherBolt := filepath.Join(dir, "other.db")
	db, err := bolt.Open(otherBolt, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("things")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	future := filepath.Join(dir, "future.db")
	s := openStore(t, future)
	if err := fileUpdate(s, func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(formatKey, []byte("diagrelay-mailbox/4")) }); err != nil {
		t.Fatal(err)
	}
	abandon(s) // Close would tag it diagrelay-mailbox/3 again

	for _, c := range []struct{ path, want string }{
		{write("text.db", bytes.Repeat([]byte("not a database\n"), 2000)), "not a bbolt file"},
		{write("short.db", []byte("tiny")), "not a bbolt file"},
		{write("zeros.db", make([]byte, 64<<10)), "not a bbolt file"},
		{write("empty.db", nil), "the file is empty"},
		{otherBolt, "not a diagrelay mailbox"},
		{future, "unsupported mailbox format"},
		{dir, "mailbox: open"},
		{filepath.Join(dir, "missing", "mailbox.db"), "mailbox: create"},
		{symlink(t, filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling.db")), "a symbolic link to a missing file"},
	} {
		s, err := Open(c.path, WithLockTimeout(0))
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", filepath.Base(c.path))
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Open(%s): %q, want it to name the path and say %q", filepath.Base(c.path), err, c.want)
		}
	}

	// An empty bbolt file (the first edition left one when it crashed
	// while creating a mailbox) holds nothing and becomes a mailbox.
	emptyBolt := filepath.Join(dir, "emptybolt.db")
	db, err = bolt.Open(emptyBolt, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	mustPost(t, openStore(t, emptyBolt), msg("/root", "/root/x", "m", 0))
}

func TestStoreFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	openStore(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Fatalf("mode %v: readable by others", perm)
	}
}

// holdCommit starts a write that leads a commit and holds it open until
// release; done gets the leader's result.
func holdCommit(s *Store) (release func(), done <-chan error) {
	entered, hold, result := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		result <- fileUpdate(s, func(*bolt.Tx) error {
			close(entered)
			<-hold
			return nil
		})
	}()
	<-entered
	return func() { close(hold) }, result
}

// Writes that queue while a commit is running share the next commit, and a
// write that fails inside a shared commit fails alone.
func TestStoreGroupCommit(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "mailbox.db"))
	base := s.Stats()
	release, leaderDone := holdCommit(s)

	const posters = 20
	errs := make(chan error, posters+2)
	for i := range posters {
		go func() { errs <- s.Post(msg("/root", "/root/x", "queued", i)) }()
	}
	failing := errors.New("this write fails")
	go func() { errs <- fileUpdate(s, func(*bolt.Tx) error { return failing }) }()
	go func() { errs <- fileUpdate(s, func(*bolt.Tx) error { panic("boom") }) }()
	waitQueued(t, s, posters+2)
	release()
	if err := <-leaderDone; err != nil {
		t.Fatal(err)
	}
	var sawFail, sawPanic int
	for range posters + 2 {
		switch err := <-errs; {
		case err == nil:
		case errors.Is(err, failing):
			sawFail++
		case errors.Is(err, ErrCorrupt) && strings.Contains(err.Error(), "boom"):
			sawPanic++
		default:
			t.Fatal(err)
		}
	}
	if sawFail != 1 || sawPanic != 1 {
		t.Fatalf("failing write errors: %d, panicking: %d", sawFail, sawPanic)
	}
	got := mustRead(t, s, "/root", 0)
	if len(got) != posters {
		t.Fatalf("%d of %d queued posts stored", len(got), posters)
	}
	st := s.Stats()
	// The leader's write was a checkpoint alone; then the 20 posts shared
	// one commit of the log, and the two functions a checkpoint, which
	// failed and was done again without them (each then failing alone).
	if st.Posts-base.Posts != posters || st.Commits-base.Commits != 1 || st.Checkpoints-base.Checkpoints != 2 {
		t.Fatalf("stats %+v after %+v", st, base)
	}

	// Now with nothing failing: the leader's commit, then one for all.
	base = s.Stats()
	release, leaderDone = holdCommit(s)
	for i := range posters {
		go func() { errs <- s.Post(msg("/k", "/k/x", "queued", i)) }()
	}
	waitQueued(t, s, posters)
	release()
	<-leaderDone
	for range posters {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Commits-base.Commits != 1 || st.Posts-base.Posts != posters {
		t.Fatalf("%d queued posts took %d commits, want 1", posters, st.Commits-base.Commits)
	}
	if got := mustRead(t, s, "/k", 0); len(got) != posters || !slices.IsSortedFunc(got, func(a, b Entry) int { return int(a.ID) - int(b.ID) }) {
		t.Fatalf("%d stored", len(got))
	}
}

// A repeated Ack costs no commit.
func TestStoreAckWithoutMatchDoesNotWrite(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "mailbox.db"))
	mustPost(t, s, msg("/root", "/root/x", "m", 0))
	id := mustRead(t, s, "/root", 0)[0].ID
	mustAck(t, s, "/root", []uint64{id}, 1)
	before := s.Stats()
	mustAck(t, s, "/root", []uint64{id}, 0)
	mustAck(t, s, "/k", []uint64{id}, 0)
	if after := s.Stats(); after != before {
		t.Fatalf("stats changed from %+v to %+v", before, after)
	}
	if before.Acked != 1 || before.Posts != 1 {
		t.Fatalf("stats %+v", before)
	}
}

// countEntries counts recipient's entries, however many there are.
func countEntries(t testing.TB, s *Store, recipient string) int {
	t.Helper()
	n := 0
	if err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(logBucket).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if _, r, ok := parseLogKey(k); ok && string(r) == recipient {
				n++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}
