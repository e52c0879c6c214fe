package mailbox

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// fileUpdate runs fn in a checkpoint of s (checkpoint.go): what tests use
// to write the bbolt file directly, in the one kind of transaction that
// writes it.
func fileUpdate(s *Store, fn func(*bolt.Tx) error) error {
	return s.commits.do(s, &write{ckpt: fn})
}

// abandon leaves s as kill -9 would: its files closed without a
// checkpoint (what it wrote is in the page cache, as after a kill), its
// lock let go.
func abandon(s *Store) {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	s.closed = true
	s.waitBackground()
	s.logs[0].close()
	s.logs[1].close()
	s.db.Close()
}

// Posts and acks live in the log until a checkpoint; a crash before it
// loses neither, and an acknowledged entry does not come back.
func TestLogReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	for i := range 5 {
		mustPost(t, s, msg("/root", "/root/x", "m", i))
	}
	mustPost(t, s, msg("/k", "/k/x", "k", 0))
	es := mustRead(t, s, "/root", 0)
	mustAck(t, s, "/root", ids(es[:2]), 2)
	if st := s.Stats(); st.Checkpoints != 0 || st.Commits != 7 {
		t.Fatalf("stats %+v: want 7 commits of the log and no checkpoint", st)
	}
	abandon(s)

	rep, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Log == nil || rep.Log.Posts != 6 || rep.Log.Acks != 1 || rep.Log.TornTail || !rep.Clean() ||
		len(rep.Recipients) != 2 || rep.Recipients[1].Unacknowledged != 3 {
		t.Fatalf("Check after the crash: %+v, log %+v", rep, rep.Log)
	}
	s = openStore(t, path)
	if got := fmt.Sprint(messages(mustRead(t, s, "/root", 0))); got != "[m #2 m #3 m #4]" {
		t.Fatalf("after replay: %s", got)
	}
	mustPost(t, s, msg("/root", "/root/x", "next", 9))
	got := mustRead(t, s, "/root", 0)
	if last := got[len(got)-1]; last.ID != 7 {
		t.Fatalf("the next id after replay is %d, want 7", last.ID)
	}
	s.Close()
	if rep, err := Check(path); err != nil || rep.Log.Posts != 0 || !rep.Clean() {
		t.Fatalf("Check after Close: %+v %v", rep, err)
	}
}

// Past checkpointAt a commit is followed by a checkpoint, which moves the
// log into the file and starts it again: reads, acks and ids go on across
// it, and a crash after it replays only the log's new epoch.
func TestLogCheckpoints(t *testing.T) {
	defer func(at int64) { checkpointAt = at }(checkpointAt)
	checkpointAt = 4 << 10
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	postMany(t, s, "/root", 300)
	es := mustRead(t, s, "/root", 0)
	mustAck(t, s, "/root", ids(es[:100]), 100)
	if st := s.Stats(); st.Checkpoints == 0 {
		t.Fatalf("no checkpoint: %+v", st)
	}
	if got := len(mustRead(t, s, "/root", 0)); got != 200 {
		t.Fatalf("%d entries, want 200", got)
	}
	abandon(s)
	s = openStore(t, path)
	got := mustRead(t, s, "/root", 0)
	if len(got) != 200 || got[0].ID != es[100].ID {
		t.Fatalf("after a crash: %d entries from %d", len(got), got[0].ID)
	}
	if n := countEntries(t, s, "/root"); n != 200 {
		t.Fatalf("the file holds %d entries after Open's checkpoint, want 200", n)
	}
}

// A crash that cuts a commit short leaves a torn tail: Check reports it
// and stays clean, and Open drops it. Damage to frames that were flushed,
// with later commits after them, is refused by Open and reported by
// Check, not replayed up to the damage.
func TestLogTornAndDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mailbox.db")
	s := openStore(t, path)
	mustPost(t, s, msg("/root", "/root/x", "a", 0))
	mustPost(t, s, msg("/root", "/root/x", "b", 1))
	tail, logPath := s.log.tail, s.log.path
	abandon(s)
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	_, first, _ := decodeFrame(log)

	torn := append([]byte(nil), log...)
	copy(torn[tail:], log[first:tail-5]) // the second frame again, as seq 3, cut short
	torn[tail+9+7] = 3
	if err := os.WriteFile(logPath, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(path)
	if err != nil || !rep.Log.TornTail || !rep.Clean() || rep.Recipients[0].Unacknowledged != 2 {
		t.Fatalf("Check of a torn tail: %+v, log %+v, %v", rep, rep.Log, err)
	}

	damaged := append([]byte(nil), log...)
	damaged[first+frameHeader+3] ^= 1 // in the second of two flushed commits
	copy(damaged[tail:], log[first:tail])
	damaged[tail+9+7] = 3  // seq 3
	damaged[tail+17+7] = 3 // of a commit of its own
	reseal(damaged[tail : tail+(tail-int64(first))])
	if err := os.WriteFile(logPath, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Open of a damaged log: %v", err)
	}
	rep, err = Check(path)
	if err != nil || rep.Clean() || rep.Log.Damaged == "" {
		t.Fatalf("Check of a damaged log: %+v, log %+v, %v", rep, rep.Log, err)
	}

	if err := os.WriteFile(logPath, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	if got := fmt.Sprint(messages(mustRead(t, s, "/root", 0))); got != "[a #0 b #1]" {
		t.Fatalf("after a torn tail: %s", got)
	}
}

// reseal rewrites the checksum of the frame b after its bytes were edited.
func reseal(b []byte) {
	n := len(b) - crcSize
	sum := crc32.Checksum(b[:n], castagnoli())
	b[n], b[n+1], b[n+2], b[n+3] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
}

// While a background checkpoint writes one epoch into the file, commits
// go on in the next epoch's file, and reads find the records of both; an
// ack of a record being checkpointed removes it in the next checkpoint.
func TestLogBackgroundCheckpoint(t *testing.T) {
	defer func(at int64) { checkpointAt = at }(checkpointAt)
	checkpointAt = 8 << 10
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	entered, release := make(chan struct{}), make(chan struct{})
	checkpointing = func(stage string) {
		if stage == "written" {
			checkpointing = nil
			close(entered)
			<-release
		}
	}
	t.Cleanup(func() { checkpointing = nil })
	i := 0
	for ; ; i++ {
		mustPost(t, s, msg("/root", "/root/x", "m", i))
		select {
		case <-entered:
		default:
			continue
		}
		break
	}
	epoch := s.epoch
	for j := range 5 {
		mustPost(t, s, msg("/root", "/root/x", "during", i+1+j))
	}
	if s.epoch != epoch || s.frozen == nil {
		t.Fatalf("epoch %d, then %d; frozen %v: the commits did not go on in the next epoch", epoch, s.epoch, s.frozen != nil)
	}
	es := mustRead(t, s, "/root", 0)
	if len(es) != i+6 {
		t.Fatalf("read %d of %d entries while a checkpoint runs", len(es), i+6)
	}
	mustAck(t, s, "/root", ids(es[:3]), 3) // records being checkpointed
	close(release)
	s.waitBackground()
	if s.frozen != nil || s.Stats().Checkpoints != 1 {
		t.Fatalf("after the background checkpoint: frozen %v, %+v", s.frozen != nil, s.Stats())
	}
	abandon(s)
	s = openStore(t, path)
	if got := mustRead(t, s, "/root", 0); len(got) != i+3 || got[0].ID != es[3].ID {
		t.Fatalf("after a crash: %d entries from %d, want %d from %d", len(got), got[0].ID, i+3, es[3].ID)
	}
}

// An epoch that seems to end in a torn commit while the next epoch has
// frames was damaged after it was flushed: the next epoch is begun only
// once the last commit of the one before it read back whole.
func TestScanEpochsDamageBeforeNextEpoch(t *testing.T) {
	dir := t.TempDir()
	paths := LogPaths(filepath.Join(dir, "mailbox.db"))
	rec := []byte{recordV2, 1, 2, 3}
	post := func(epoch, seq uint64) []byte {
		return appendFrame(nil, &frame{kind: framePost, epoch: epoch, seq: seq, batch: seq, id: seq, recipient: "/r", rec: rec})
	}
	torn := post(1, 2)
	torn = torn[:len(torn)-2]
	first := append(post(1, 1), torn...)
	for _, c := range []struct {
		second  []byte
		damaged bool
	}{{nil, false}, {post(2, 1), true}} {
		os.WriteFile(paths[1], append(bytes.Clone(first), make([]byte, 64)...), 0o600)
		os.WriteFile(paths[0], append(c.second, make([]byte, 64)...), 0o600)
		sc, err := scanEpochs(paths, 0)
		if err != nil || (sc.damaged != nil) != c.damaged || (!c.damaged && (!sc.torn || len(sc.frames) != 1)) {
			t.Fatalf("next epoch %d bytes: %d frames, torn %v, damaged %v, %v", len(c.second), len(sc.frames), sc.torn, sc.damaged, err)
		}
	}
}
