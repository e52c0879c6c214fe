package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// damageFixture is a closed mailbox file with n messages for /root and
// n/2 for /k, posted one at a time so the layout is the same every run,
// and the entries as read back.
func damageFixture(t *testing.T, n int) (path string, root, k []Entry) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "mailbox.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		mustPost(t, s, msg("/root", "/root/x", "untrusted", i))
		if i%2 == 0 {
			mustPost(t, s, msg("/k", "/k/l", "k", i))
		}
	}
	root, k = mustRead(t, s, "/root", 0), mustRead(t, s, "/k", 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, root, k
}

// recordOffset is where e's record sits in the file's bytes.
func recordOffset(t *testing.T, data []byte, e Entry) int {
	t.Helper()
	rec := encodeRecord(e.ID, &e.ParentMessage)
	i := bytes.Index(data, rec)
	if i < 0 || bytes.Contains(data[i+1:], rec) {
		t.Fatalf("record %d is not in the file exactly once", e.ID)
	}
	return i
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Damage inside records, made in the file's bytes as a disk or an editor
// would: the file still passes bbolt's check and opens; each damaged
// record is listed, never served, and removed by Ack; the rest are served
// as they were; Check counts the damage without changing the file.
func TestDamagedRecordsInFile(t *testing.T) {
	path, root, k := damageFixture(t, 40)
	data := readFile(t, path)
	edit := func(e Entry, fn func(rec []byte)) {
		i := recordOffset(t, data, e)
		fn(data[i : i+len(encodeRecord(e.ID, &e.ParentMessage))])
	}
	// "untrusted" -> "TRUSTED!!": same length, in place.
	edit(root[3], func(rec []byte) {
		j := bytes.Index(rec, []byte("untrusted"))
		copy(rec[j:], "TRUSTED!!")
	})
	edit(root[10], func(rec []byte) { rec[len(rec)/2] ^= 0x01 }) // one bit in the message
	edit(root[11], func(rec []byte) { rec[len(rec)-1] ^= 0xff }) // the checksum
	edit(k[2], func(rec []byte) { rec[0] = 9 })                  // the version
	writeFile(t, path, data)
	before := readFile(t, path)

	rep, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Clean() || len(rep.Problems) != 0 || len(rep.Recipients) != 2 {
		t.Fatalf("Check: %+v", rep)
	}
	wantRep := []RecipientReport{
		{Recipient: "/k", Unacknowledged: len(k) - 1, Damaged: 1, DamagedIDs: []uint64{k[2].ID}},
		{Recipient: "/root", Unacknowledged: len(root) - 3, Damaged: 3, DamagedIDs: []uint64{root[3].ID, root[10].ID, root[11].ID}},
	}
	if fmt.Sprint(rep.Recipients) != fmt.Sprint(wantRep) {
		t.Fatalf("Check recipients\n %+v\nwant\n %+v", rep.Recipients, wantRep)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("Check changed the file")
	}

	s := openStore(t, path)
	p, err := s.ReadPage("/root", 0)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := slices.DeleteFunc(ids(root), func(id uint64) bool { return id == root[3].ID || id == root[10].ID || id == root[11].ID })
	if !slices.Equal(ids(p.Messages), wantIDs) || !slices.Equal(p.Damaged, []uint64{root[3].ID, root[10].ID, root[11].ID}) {
		t.Fatalf("ReadPage /root: %v, damaged %v", ids(p.Messages), p.Damaged)
	}
	for _, e := range p.Messages {
		if strings.Contains(e.Text, "TRUSTED") {
			t.Fatalf("edited record served: %+v", e)
		}
	}
	// A small limit still passes over the damaged records to fill the page.
	p, err = s.ReadPage("/root", 4)
	if err != nil || !slices.Equal(ids(p.Messages), wantIDs[:4]) || !slices.Equal(p.Damaged, []uint64{root[3].ID}) {
		t.Fatalf("ReadPage /root limit 4: %v, damaged %v, %v", ids(p.Messages), p.Damaged, err)
	}
	mustAck(t, s, "/root", []uint64{root[3].ID, root[10].ID, root[11].ID, root[0].ID}, 4)
	mustAck(t, s, "/k", []uint64{k[2].ID}, 1)
	if p, _ := s.ReadPage("/root", 0); len(p.Damaged) != 0 || len(p.Messages) != len(root)-4 {
		t.Fatalf("after ack: %d messages, damaged %v", len(p.Messages), p.Damaged)
	}
	mustPost(t, s, msg("/root", "/root/x", "after", 99))
	s.Close()
	if rep, err := Check(path); err != nil || !rep.Clean() {
		t.Fatalf("Check after the acks: %+v, %v", rep, err)
	}
}

// Damage to the file itself: Open refuses it with ErrCorrupt, naming the
// file, and leaves every byte as it was; Check reports the problem.
func TestUntrustedFileRefused(t *testing.T) {
	path, root, _ := damageFixture(t, 300)
	orig := readFile(t, path)
	const page = 4096
	// A leaf page holding records, found by a record's bytes.
	leaf := recordOffset(t, orig, root[150]) / page * page
	// The file is longer than its pages (bbolt grows it ahead): cutting
	// what no page uses is harmless, cutting into the last page is not.
	hwm := testutil.BoltUsedBytes(t, path)
	if hwm >= len(orig) {
		t.Fatalf("the pages use %d of %d bytes: no spare tail", hwm, len(orig))
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, len(orig))
	for i := range random {
		random[i] = byte(rnd.Uint32())
	}
	// Keys out of order: root[150]'s key (just before its record in the
	// leaf) turned into a later id. Every page, key and value still reads;
	// only bbolt's consistency check sees it.
	key := logKey(root[150].ID, "/root")
	at := recordOffset(t, orig, root[150]) - len(key)
	if !bytes.Equal(orig[at:at+len(key)], key) {
		t.Fatalf("no key before the record")
	}
	unordered := slices.Clone(orig)
	copy(unordered[at:], logKey(root[150].ID+1000, "/root"))
	variants := map[string][]byte{
		"empty":            {},
		"random bytes":     random,
		"truncated half":   orig[:len(orig)/2],
		"truncated a page": orig[:hwm-page],
		"truncated a byte": orig[:hwm-1],
		"zeroed leaf page": slices.Concat(orig[:leaf], make([]byte, page), orig[leaf+page:]),
		"zeroed meta":      slices.Concat(make([]byte, 2*page), orig[2*page:]),
		"text":             bytes.Repeat([]byte("not a database\n"), 300),
	}
	variants["keys out of order"] = unordered
	for name, data := range variants {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "mailbox.db")
			writeFile(t, p, data)
			fi, _ := os.Stat(p)
			s, openErr := Open(p, WithLockTimeout(0))
			if openErr == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(openErr, ErrCorrupt) || !strings.Contains(openErr.Error(), p) {
				t.Fatalf("Open: %v; want ErrCorrupt naming the file", openErr)
			}
			if name == "keys out of order" && !strings.Contains(openErr.Error(), "bbolt's consistency check") {
				t.Fatalf("Open: %v; want bbolt's consistency check to refuse it", openErr)
			}
			after, _ := os.Stat(p)
			if !bytes.Equal(readFile(t, p), data) || !after.ModTime().Equal(fi.ModTime()) {
				t.Fatal("Open changed the refused file")
			}
			rep, err := Check(p, WithLockTimeout(0))
			if err != nil || rep.Clean() || len(rep.Problems) == 0 {
				t.Fatalf("Check: %+v, %v", rep, err)
			}
			if !bytes.Equal(readFile(t, p), data) {
				t.Fatal("Check changed the file")
			}
			t.Logf("%s: %v; check: %q", name, openErr, rep.Problems)
		})
	}
	// Cutting the spare tail leaves a whole mailbox.
	p := filepath.Join(t.TempDir(), "mailbox.db")
	writeFile(t, p, orig[:hwm])
	s := openStore(t, p)
	if got := len(mustRead(t, s, "/root", 0)); got != len(root) {
		t.Fatalf("after cutting the spare tail: %d messages, want %d", got, len(root))
	}
}

// A file of the first format (records without checksums, format tag 1)
// still reads; Open retags it and new records get checksums; Check counts
// the old ones as unchecked.
func TestVersion1File(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := []relay1{{1, msg("/root", "/root/x", "old", 1)}, {2, msg("/root", "/root/x", "old", 2)}}
	if err := db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket(metaBucket)
		meta.Put(formatKey, formatTagV1)
		meta.SetSequence(2)
		boxes, _ := tx.CreateBucket(recipientsBucket)
		box, _ := boxes.CreateBucket([]byte("/root"))
		for _, o := range old {
			if err := box.Put(idKey(o.id), encodeRecordV1(nil, &o.m)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	rep, err := Check(path)
	if err != nil || !rep.Clean() || fmt.Sprint(rep.Recipients) != fmt.Sprint([]RecipientReport{{Recipient: "/root", Unacknowledged: 2, Unchecked: 2}}) {
		t.Fatalf("Check of a version 1 file: %+v, %v", rep, err)
	}
	s := openStore(t, path)
	mustPost(t, s, msg("/root", "/root/x", "new", 3))
	es := mustRead(t, s, "/root", 0)
	if len(es) != 3 || !sameMessage(es[0].ParentMessage, old[0].m) || es[2].ID != 3 {
		t.Fatalf("read %+v", es)
	}
	s.Close()
	rep, err = Check(path)
	if err != nil || !rep.Clean() || rep.Recipients[0].Unacknowledged != 3 || rep.Recipients[0].Unchecked != 2 {
		t.Fatalf("Check after a new post: %+v, %v", rep, err)
	}
	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if tag := tx.Bucket(metaBucket).Get(formatKey); !bytes.Equal(tag, formatTag) {
			t.Errorf("format tag %q after Open", tag)
		}
		return nil
	})
}

type relay1 struct {
	id uint64
	m  diag.ParentMessage
}

// Check waits for the lock like Open and fails with ErrLocked while a
// Store holds the file; it refuses a missing file rather than call it
// clean.
func TestCheckLockedAndMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	mustPost(t, s, msg("/root", "/root/x", "m", 0))
	start := time.Now()
	if _, err := Check(path, WithLockTimeout(50*time.Millisecond)); !errors.Is(err, ErrLocked) {
		t.Fatalf("Check of a held file: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Check waited %v", d)
	}
	s.Close()
	if rep, err := Check(path); err != nil || !rep.Clean() || rep.Recipients[0].Unacknowledged != 1 {
		t.Fatalf("Check after Close: %+v, %v", rep, err)
	}
	if _, err := Check(filepath.Join(t.TempDir(), "none.db")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Check of a missing file: %v", err)
	}
}

// The Store must not panic or crash on a file whose pages are damaged.
// Each run damages one page, in its header or only in its body, and then
// uses the file. Open either refuses it (ErrCorrupt, the file unchanged)
// or, the file having passed bbolt's check, serves it: damage it finds in
// records is listed, not an error. Check agrees with Open.
func TestStoreDamagedPages(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src.db")
	s := openStore(t, src)
	for i := range 300 { // sequential, so the layout is the same every run
		mustPost(t, s, msg([]string{"/root", "/root", "/k"}[i%3], "/root/x", "m", i))
	}
	s.Close()
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const page, header = 4096, 16
	opened, refused, damaged := 0, 0, 0
	for p := 0; p*page < len(orig); p++ {
		for _, from := range []int{0, header, page / 2} { // page/2: only records, in a full leaf
			for _, fill := range []byte{0x00, 0xff} {
				data := slices.Clone(orig)
				for i := p*page + from; i < min((p+1)*page, len(data)); i += 7 {
					data[i] = fill
				}
				path := filepath.Join(t.TempDir(), "damaged.db")
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Fatal(err)
				}
				rep, checkErr := Check(path, WithLockTimeout(0))
				if checkErr != nil {
					t.Fatalf("page %d: Check: %v", p, checkErr)
				}
				s, err := Open(path, WithLockTimeout(0))
				if err != nil {
					refused++
					if !errors.Is(err, ErrCorrupt) {
						t.Errorf("page %d: Open: %v, want ErrCorrupt", p, err)
					}
					if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
						t.Errorf("page %d: the refused file changed", p)
					}
					if len(rep.Problems) == 0 {
						t.Errorf("page %d: Open refused what Check found no problem in: %v", p, err)
					}
					continue
				}
				opened++
				if len(rep.Problems) != 0 {
					t.Errorf("page %d: Open accepted what Check found problems in: %q", p, rep.Problems)
				}
				for _, r := range []string{"/root", "/k"} {
					pg, err := s.ReadPage(r, MaxReadLimit)
					if err != nil {
						t.Errorf("page %d: ReadPage of a file that passed the check: %v", p, err)
						continue
					}
					damaged += len(pg.Damaged)
					s.Ack(r, slices.Concat(pg.Damaged, ids(pg.Messages[:len(pg.Messages)/2])))
				}
				if err := s.Post(msg("/root", "/root/x", "after damage", 0)); err != nil {
					t.Errorf("page %d: Post: %v", p, err)
				}
				s.Close()
			}
		}
	}
	t.Logf("%d damaged files opened (%d damaged records listed), %d refused", opened, damaged, refused)
	if opened == 0 || refused == 0 || damaged == 0 {
		t.Fatal("the damage missed")
	}
}
