package mailbox

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The next commit may run while a batch is still being read back
// (committer.doChecked passes the lead first): the read-back sees the file
// as its own commit left it, so a later commit that rewrites the record
// does not fail a Post whose record was written right.
func TestReadBackSeesItsOwnCommit(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "mailbox.db"))
	// Free pages first, so that the later commit takes freed pages instead
	// of growing the file: a commit that remaps waits for the read-back
	// (see the next test), and here both are on one goroutine.
	for i := range 200 {
		mustPost(t, s, msg("/k", "/k/x", "freed", i))
	}
	ids := []uint64{}
	for _, e := range mustRead(t, s, "/k", 0) {
		ids = append(ids, e.ID)
	}
	if _, err := s.Ack("/k", ids); err != nil {
		t.Fatal(err)
	}
	key := logKey(1000, "/root")
	batch := oneWrite(1000, "/root", "as written")
	errs, rb := s.runBatch(batch)
	if errs[0] != nil || rb == nil {
		t.Fatalf("runBatch: %v, read-back %v", errs[0], rb)
	}
	if err := s.update(func(tx *bolt.Tx) error { return tx.Bucket(logBucket).Put(key, []byte("rewritten later")) }); err != nil {
		t.Fatal(err)
	}
	rb.check(batch, errs)
	if errs[0] != nil {
		t.Fatalf("read-back after a later commit: %v", errs[0])
	}
	if got := s.idx.after("/root", 0, true, 10); len(got) != 1 || got[0] != 1000 {
		t.Fatalf("index after the read-back: %v", got)
	}
}

// A commit that grows the file past bbolt's memory map remaps it, which
// waits for every open read transaction: an open read-back only delays
// it until the read-back ends, which never waits for a commit.
func TestCommitThatRemapsWaitsForReadBack(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "mailbox.db"))
	batch := oneWrite(1, "/root", "one")
	errs, rb := s.runBatch(batch)
	if rb == nil {
		t.Fatal(errs[0])
	}
	grown := make(chan error, 1)
	go func() {
		big := bytes.Repeat([]byte{'x'}, 60<<10)
		grown <- s.update(func(tx *bolt.Tx) error {
			b := tx.Bucket(logBucket)
			for i := range 256 { // 15 MiB: past the map of a new file
				if err := b.Put(logKey(uint64(100+i), "/big"), big); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	select {
	case err := <-grown:
		t.Fatalf("the growing commit ended while a read transaction held the map: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	rb.check(batch, errs)
	if err := <-grown; err != nil || errs[0] != nil {
		t.Fatalf("growing commit: %v; read-back: %v", err, errs[0])
	}
}

// oneWrite is a batch of one write that puts rec under id for recipient,
// as Post would.
func oneWrite(id uint64, recipient, rec string) []*write {
	key := logKey(id, recipient)
	return []*write{{
		fn:    func(tx *bolt.Tx) error { return tx.Bucket(logBucket).Put(key, []byte(rec)) },
		wrote: &stored{recipient: recipient, id: id, key: key, rec: []byte(rec)},
	}}
}
