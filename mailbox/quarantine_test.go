package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// A damaged record is quarantined: ReadPage serves the others and names it
// in Damaged, Read skips it, and Ack removes it. A key that is no id is
// passed over.
func TestStoreCorruptRecords(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "mailbox.db"))
	postMany(t, s, "/root", 3)
	entries := mustRead(t, s, "/root", 0)
	bad := entries[1]
	rec := encodeRecord(bad.ID, &bad.ParentMessage)
	badKey := logKey(bad.ID, "/root")
	for name, tc := range map[string]struct {
		damage  func(b *bolt.Bucket) error
		damaged []uint64
	}{
		"truncated record": {func(b *bolt.Bucket) error { return b.Put(badKey, rec[:len(rec)-3]) }, []uint64{bad.ID}},
		"edited text": {func(b *bolt.Bucket) error {
			return b.Put(badKey, bytes.Replace(rec, []byte("untrusted"), []byte("TRUSTED!!"), 1))
		}, []uint64{bad.ID}},
		"other recipient's record": {func(b *bolt.Bucket) error {
			m := bad.ParentMessage
			m.Recipient = "/k"
			return b.Put(badKey, encodeRecord(bad.ID, &m))
		}, []uint64{bad.ID}},
		"record of another id": {func(b *bolt.Bucket) error { return b.Put(badKey, encodeRecord(bad.ID+1, &bad.ParentMessage)) }, []uint64{bad.ID}},
		"short key":            {func(b *bolt.Bucket) error { return b.Put([]byte{1}, rec) }, []uint64{}},
		"nested bucket": {func(b *bolt.Bucket) error {
			_, err := b.CreateBucket(logKey(9, "/root"))
			return err
		}, []uint64{}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := fileUpdate(s, func(tx *bolt.Tx) error {
				b := tx.Bucket(logBucket)
				c := b.Cursor()
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if v == nil {
						if err := b.DeleteBucket(k); err != nil {
							return err
						}
					} else if err := b.Delete(k); err != nil {
						return err
					}
				}
				for _, e := range entries {
					if err := b.Put(logKey(e.ID, "/root"), encodeRecord(e.ID, &e.ParentMessage)); err != nil {
						return err
					}
				}
				return tc.damage(b)
			}); err != nil {
				t.Fatal(err)
			}
			p, err := s.ReadPage("/root", 0)
			if err != nil {
				t.Fatal(err)
			}
			want := entries
			if len(tc.damaged) > 0 {
				want = []Entry{entries[0], entries[2]}
			}
			if fmt.Sprint(ids(p.Messages)) != fmt.Sprint(ids(want)) || fmt.Sprint(p.Damaged) != fmt.Sprint(tc.damaged) {
				t.Fatalf("ReadPage: messages %v, damaged %v; want %v, %v", ids(p.Messages), p.Damaged, ids(want), tc.damaged)
			}
			if es := mustRead(t, s, "/root", 0); fmt.Sprint(ids(es)) != fmt.Sprint(ids(want)) {
				t.Fatalf("Read: %v", ids(es))
			}
		})
	}
	// The last state has no damaged record; damage one and ack it.
	if err := fileUpdate(s, func(tx *bolt.Tx) error {
		return tx.Bucket(logBucket).Put(badKey, rec[:5])
	}); err != nil {
		t.Fatal(err)
	}
	mustAck(t, s, "/root", []uint64{bad.ID}, 1)
	if p, err := s.ReadPage("/root", 0); err != nil || len(p.Damaged) != 0 || len(p.Messages) != 2 {
		t.Fatalf("after acking the damaged id: %+v, %v", p, err)
	}
}

// Post answers only when its frame reads back from the log as written.
// Here the log's bytes are changed after the flush (what a bug or a
// damaged disk would do) in a commit of three posts: the post whose frame
// differs, and the one after it, fail with ErrCorrupt and are not stored
// (replay would stop at the damaged frame); the first is stored. The log
// is checkpointed at once, so later commits never follow the damage.
func TestPostFailsWhenItsFrameDoesNotReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	mustPost(t, s, msg("/root", "/root/x", "before", 0))
	release, leaderDone := holdCommit(s)
	results := make([]chan error, 3)
	for i := range results {
		results[i] = make(chan error, 1)
		go func() { results[i] <- s.Post(msg("/root", "/root/x", fmt.Sprint("batch", i), i+1)) }()
		waitQueued(t, s, i+1)
	}
	logWritten = func(f *os.File, off int64, n int) {
		logWritten = nil
		// The second frame: past the first, whose length is in its header.
		b := make([]byte, n)
		f.ReadAt(b, off)
		_, first, err := decodeFrame(b)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteAt([]byte("XX"), off+int64(first)+frameHeader+2)
	}
	t.Cleanup(func() { logWritten = nil })
	base := s.Stats()
	release()
	if err := <-leaderDone; err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false} {
		err := <-results[i]
		if (err == nil) != want || (err != nil && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "did not read back"))) {
			t.Errorf("post %d: %v", i, err)
		}
	}
	if st := s.Stats(); st.Posts-base.Posts != 1 || st.Checkpoints == base.Checkpoints {
		t.Fatalf("stats %+v after %+v: want one more post and a checkpoint", st, base)
	}
	mustPost(t, s, msg("/root", "/root/x", "after", 9))
	want := "[before #0 batch0 #1 after #9]"
	if got := fmt.Sprint(messages(mustRead(t, s, "/root", 0))); got != want {
		t.Fatalf("read %s, want %s", got, want)
	}
	abandon(s)
	s = openStore(t, path)
	if got := fmt.Sprint(messages(mustRead(t, s, "/root", 0))); got != want {
		t.Fatalf("after a crash, read %s, want %s", got, want)
	}
}

// waitQueued waits until n writes wait in s's commit queue.
func waitQueued(t testing.TB, s *Store, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%d writes queued", n), func() bool {
		s.commits.mu.Lock()
		defer s.commits.mu.Unlock()
		return len(s.commits.queue) == n
	})
}

func leading(s *Store) bool {
	s.commits.mu.Lock()
	defer s.commits.mu.Unlock()
	return s.commits.leading
}

// Damage is bounded in what it costs a reader: one ReadPage lists at most
// MaxReadLimit damaged ids (and then stops, with no message if damage
// comes first), so reading the rest takes acking those; Check counts all
// of the damage but lists at most MaxReportedIDs ids, and counts entries
// that are not records at all as unaddressable.
func TestDamageBounds(t *testing.T) {
	const nDamaged = MaxReadLimit + 5
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	if err := fileUpdate(s, func(tx *bolt.Tx) error {
		log := tx.Bucket(logBucket)
		for id := uint64(1); id <= nDamaged; id++ {
			if err := log.Put(logKey(id, "/root"), []byte{recordV2, 'x', 'x', 'x', 'x'}); err != nil {
				return err
			}
		}
		if err := log.Put([]byte("short"), []byte("v")); err != nil {
			return err
		}
		if _, err := log.CreateBucket(logKey(nDamaged+100, "/root")); err != nil {
			return err
		}
		// What a migration leaves where a second-edition file was damaged.
		boxes, err := tx.CreateBucket(recipientsBucket)
		if err != nil {
			return err
		}
		if err := boxes.Put([]byte("/v"), []byte("a value, not a bucket")); err != nil {
			return err
		}
		return tx.Bucket(metaBucket).SetSequence(nDamaged)
	}); err != nil {
		t.Fatal(err)
	}
	mustPost(t, s, msg("/root", "/root/x", "good", 1))
	mustPost(t, s, msg("/root", "/root/x", "good", 2))
	s.Close()

	rep, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Recipients) != 2 {
		t.Fatalf("Check: %+v", rep.Recipients)
	}
	root, v := rep.Recipients[0], rep.Recipients[1]
	if root.Recipient != "/root" || root.Damaged != nDamaged || len(root.DamagedIDs) != MaxReportedIDs ||
		root.DamagedIDs[0] != 1 || root.Unacknowledged != 2 || root.Unaddressable != 1 || rep.Unaddressable != 1 {
		t.Fatalf("Check /root: %s %d damaged (%d ids listed, first %d), %d unacknowledged, %d unaddressable (%d naming no recipient)",
			root.Recipient, root.Damaged, len(root.DamagedIDs), root.DamagedIDs[0], root.Unacknowledged, root.Unaddressable, rep.Unaddressable)
	}
	if v.Recipient != "/v" || v.Unaddressable != 1 || rep.Clean() {
		t.Fatalf("Check /v: %+v, clean %v", v, rep.Clean())
	}

	s = openStore(t, path)
	p, err := s.ReadPage("/root", 0)
	if err != nil || len(p.Messages) != 0 || len(p.Damaged) != MaxReadLimit || p.Damaged[0] != 1 || p.Damaged[MaxReadLimit-1] != MaxReadLimit {
		t.Fatalf("first ReadPage: %d messages, %d damaged, %v", len(p.Messages), len(p.Damaged), err)
	}
	mustAck(t, s, "/root", p.Damaged, MaxReadLimit)
	p, err = s.ReadPage("/root", 0)
	if err != nil || fmt.Sprint(messages(p.Messages)) != "[good #1 good #2]" || fmt.Sprint(p.Damaged) != "[1001 1002 1003 1004 1005]" {
		t.Fatalf("ReadPage after the ack: %v, damaged %v, %v", messages(p.Messages), p.Damaged, err)
	}
}
