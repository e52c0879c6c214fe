package mailbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// A first- or second-edition file opens: Open migrates it in place to the
// third edition, and everything reads as before, ids and damage included.
// Check counts the same before and after; entries that are not records
// stay where they were, and are still counted.
func TestMigrateOldFiles(t *testing.T) {
	for _, tag := range [][]byte{formatTagV1, formatTagV2} {
		t.Run(string(tag), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mailbox.db")
			var entries []oldEntry
			for i := range 30 {
				r := []string{"/root", "/k", "/root/a"}[i%3]
				entries = append(entries, oldEntry{id: uint64(i + 1), recipient: r, m: msg(r, r+"/x", "old", i)})
			}
			v2 := string(tag) == string(formatTagV2)
			if v2 { // damage only a checksum can see
				e := &entries[4]
				e.rec = encodeRecord(e.id, &e.m)
				e.rec[len(e.rec)/2] ^= 1
			}
			writeOldFile(t, path, tag, entries, func(tx *bolt.Tx) error {
				boxes := tx.Bucket(recipientsBucket)
				box := boxes.Bucket([]byte("/root"))
				if err := box.Put([]byte("short"), []byte("v")); err != nil {
					return err
				}
				if _, err := box.CreateBucket(idKey(99)); err != nil {
					return err
				}
				return boxes.Put([]byte("/v"), []byte("a value, not a bucket"))
			})
			before, err := Check(path)
			if err != nil || before.Format != string(tag) {
				t.Fatalf("Check before: %+v, %v", before, err)
			}

			s := openStore(t, path)
			reads := map[string]Page{}
			for _, r := range []string{"/root", "/k", "/root/a"} {
				p, err := s.ReadPage(r, 0)
				if err != nil {
					t.Fatal(err)
				}
				reads[r] = p
				for _, e := range p.Messages {
					want := entries[e.ID-1]
					if want.recipient != r || !sameMessage(e.ParentMessage, want.m) {
						t.Fatalf("%s: entry %d is %+v, want %+v", r, e.ID, e, want)
					}
				}
			}
			wantDamaged := "[]"
			if v2 {
				wantDamaged = "[5]"
			}
			if n := len(reads["/root"].Messages) + len(reads["/k"].Messages) + len(reads["/root/a"].Messages); n != 30-len(reads["/k"].Damaged) ||
				fmt.Sprint(reads["/k"].Damaged) != wantDamaged {
				t.Fatalf("read %d messages, /k damaged %v (want %s)", n, reads["/k"].Damaged, wantDamaged)
			}
			mustPost(t, s, msg("/root", "/root/x", "new", 30))
			if es := mustRead(t, s, "/root", 0); es[len(es)-1].ID != 31 {
				t.Fatalf("the first id after the migration is %d, want 31", es[len(es)-1].ID)
			}
			mustAck(t, s, "/root", []uint64{31}, 1)
			s.Close()

			after, err := Check(path)
			if err != nil || after.Format != string(formatTag) {
				t.Fatalf("Check after: %+v, %v", after, err)
			}
			if !before.Log.Missing || after.Log.Missing || after.Log.Posts != 0 {
				t.Fatalf("the log: before %+v, after %+v", before.Log, after.Log)
			}
			after.Format, before.Format = "", ""
			after.Log, before.Log = nil, nil
			if fmt.Sprintf("%+v", after) != fmt.Sprintf("%+v", before) {
				t.Fatalf("Check counts changed by the migration:\n before %+v\n after  %+v", before, after)
			}
			if after.Clean() {
				t.Fatal("the unaddressable entries were lost")
			}
			// Opening again moves nothing and changes nothing.
			openStore(t, path).Close()
			if again, _ := Check(path); fmt.Sprintf("%+v", again.Recipients) != fmt.Sprintf("%+v", after.Recipients) {
				t.Fatalf("a second Open changed the file: %+v", again)
			}
		})
	}
}

const migrateCrashEnv = "DIAGRELAY_MAILBOX_MIGRATE_FILE"

// TestMigrateHelperProcess is not a test: TestMigrateCrash runs it in a
// subprocess, which opens the file (migrating it a chunk at a time) and
// prints a line after each chunk's commit, and "open" once Open returns.
func TestMigrateHelperProcess(t *testing.T) {
	path := os.Getenv(migrateCrashEnv)
	if path == "" {
		t.Skip("helper process for TestMigrateCrash")
	}
	migrateChunk = 300
	migrated = func(n int) { os.Stdout.WriteString("moved " + strconv.Itoa(n) + "\n") }
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Stdout.WriteString("open\n")
	s.Close()
	os.Exit(0)
}

// kill -9 during a migration loses and duplicates nothing: after each kill
// every entry of the old file is in the file exactly once (Check counts
// both layouts), the next Open carries on where the last stopped, and in
// the end every message reads under its id, once.
func TestMigrateCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	const n = 3000 // 10 chunks of 300 in the helper
	path := filepath.Join(t.TempDir(), "mailbox.db")
	var entries []oldEntry
	for i := range n {
		r := fmt.Sprintf("/root/p%d", i%64)
		entries = append(entries, oldEntry{id: uint64(i + 1), recipient: r, m: msg(r, r+"/x", "m", i)})
	}
	writeOldFile(t, path, formatTagV2, entries, nil)

	total := func() (unacked int) {
		t.Helper()
		rep, err := Check(path)
		if err != nil || !rep.Clean() {
			t.Fatalf("Check after a kill: %+v, %v", rep, err)
		}
		for _, rr := range rep.Recipients {
			unacked += rr.Unacknowledged
		}
		return unacked
	}
	for _, killAfter := range []int{3, 2} { // chunks committed before the kill
		p := testutil.StartSubprocess(t, "TestMigrateHelperProcess", migrateCrashEnv+"="+path)
		for seen := 0; seen < killAfter && p.Stdout.Scan(); {
			if strings.HasPrefix(p.Stdout.Text(), "moved ") {
				seen++
			}
		}
		p.Kill()
		p.WaitKilled(t)
		if fileFormat(t, path) != string(formatTag) {
			t.Fatalf("format %q after the kill", fileFormat(t, path))
		}
		if got := total(); got != n {
			t.Fatalf("after a kill mid-migration the file holds %d messages, want %d", got, n)
		}
		if !stillToMigrate(t, path) {
			t.Fatal("the kill came after the migration: the test proved nothing")
		}
	}
	s := openStore(t, path)
	seen := map[uint64]bool{}
	for i := range 64 {
		r := fmt.Sprintf("/root/p%d", i)
		for _, e := range mustRead(t, s, r, 0) {
			want := entries[e.ID-1]
			if seen[e.ID] || want.recipient != r || !sameMessage(e.ParentMessage, want.m) {
				t.Fatalf("entry %d under %s: %+v (seen before: %v)", e.ID, r, e, seen[e.ID])
			}
			seen[e.ID] = true
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d messages read after the migration", len(seen), n)
	}
	s.Close()
	if stillToMigrate(t, path) {
		t.Fatal("the migration did not finish")
	}
}

// stillToMigrate reports whether the closed file at path still holds
// records under recipients.
func stillToMigrate(t *testing.T, path string) bool {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	left := false
	db.View(func(tx *bolt.Tx) error {
		if boxes := tx.Bucket(recipientsBucket); boxes != nil {
			left = holdsRecords(boxes)
		}
		return nil
	})
	return left
}
