package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/internal/datadir"
)

// mailbox check on a clean mailbox: exit 0, per-recipient counts, and the
// file not changed, not even its modification time; while serve holds the
// file it fails clearly instead of waiting forever; usage errors exit 2.
func TestMailboxCheckCommand(t *testing.T) {
	data := mailboxWith(t, "a", "b")
	path := filepath.Join(data, datadir.MailboxFile)
	before, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	time.Sleep(10 * time.Millisecond) // a write now would show in the mtime

	r := runDiagrelay(t, nil, "", "mailbox", "check", "--data", data)
	wantExit(t, "mailbox check", r, 0, "")
	for _, has := range []string{"mailbox " + path + "\n", "bbolt consistency check: passed", "/root", "result: clean: 2 messages in 1 mailboxes\n"} {
		if !strings.Contains(r.stdout, has) {
			t.Errorf("output lacks %q:\n%s", has, r.stdout)
		}
	}
	lines := strings.Split(r.stdout, "\n")
	for i, l := range lines {
		if strings.Contains(l, "recipient") {
			if f := strings.Fields(l); strings.Join(f, " ") != "recipient unacknowledged damaged unchecked" {
				t.Errorf("header %q", l)
			}
			if f := strings.Fields(lines[i+1]); strings.Join(f, " ") != "/root 2 0 0" {
				t.Errorf("row %q", lines[i+1])
			}
		}
	}
	after, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("mailbox check changed the file")
	}

	s := startServer(t, data, "")
	r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", data, "--wait", "100ms")
	wantExit(t, "mailbox check while serve runs", r, 1, "in use, most likely by a running diagrelay serve")
	if _, err := s.host.call("capabilities.probe", nil); err != nil {
		t.Errorf("serve after the check: %v", err)
	}
	s.stop(syscall.SIGTERM)

	loose := shortTempDir(t)
	os.Chmod(loose, 0o755)
	os.Rename(path, filepath.Join(loose, datadir.MailboxFile))
	r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", loose)
	wantExit(t, "mailbox check of a loose directory", r, 0, "")
	if !strings.Contains(r.stdout, "warning: serve will refuse this directory") || !strings.Contains(r.stdout, "chmod 700 "+loose) {
		t.Errorf("no warning about the mode:\n%s", r.stdout)
	}

	for _, c := range []struct {
		args []string
		code int
		has  string
	}{
		{[]string{"mailbox"}, 2, "give a subcommand: check"},
		{[]string{"mailbox", "repair"}, 2, "usage"},
		{[]string{"mailbox", "check", "now"}, 2, `unexpected argument "now"`},
		{[]string{"mailbox", "check", "--dta", data}, 2, "dta"},
		{[]string{"mailbox", "check", "--wait", "soon"}, 2, "soon"},
		{[]string{"mailbox", "--help"}, 0, "usage"},
		{[]string{"mailbox", "check", "--data", filepath.Join(data, "nothing")}, 1, "no such file"},
	} {
		wantExit(t, strings.Join(c.args, " "), runDiagrelay(t, nil, "", c.args...), c.code, c.has)
	}
}

// A mailbox the first edition wrote (format tag 1, records without
// checksums) is served by a real serve and reported by mailbox check as
// clean, its records counted as unchecked; new records get checksums.
func TestFirstEditionMailbox(t *testing.T) {
	data := shortTempDir(t)
	path := filepath.Join(data, datadir.MailboxFile)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A version 1 record, as the first edition encoded it: 0x01, then
	// uvarint length and bytes of recipient, from, text, level, source,
	// message, then zigzag varint seconds and uvarint nanoseconds.
	v1 := func(message string) []byte {
		b := []byte{1}
		for _, f := range []string{"/root", "/root/x", "old text", "info", "", message} {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
		b = binary.AppendVarint(b, 1767225600) // 2026-01-01T00:00:00Z
		return binary.AppendUvarint(b, 5)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket([]byte("meta"))
		meta.Put([]byte("format"), []byte("diagrelay-mailbox/1"))
		meta.SetSequence(2)
		boxes, _ := tx.CreateBucket([]byte("recipients"))
		box, _ := boxes.CreateBucket([]byte("/root"))
		box.Put(binary.BigEndian.AppendUint64(nil, 1), v1("old one"))
		return box.Put(binary.BigEndian.AppendUint64(nil, 2), v1("old two"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	row := func(out string) string {
		for l := range strings.Lines(out) {
			if f := strings.Fields(l); len(f) == 4 && f[0] == "/root" {
				return strings.Join(f, " ")
			}
		}
		return ""
	}
	r := runDiagrelay(t, nil, "", "mailbox", "check", "--data", data)
	wantExit(t, "mailbox check of a first-edition file", r, 0, "")
	if row(r.stdout) != "/root 2 0 2" || !strings.Contains(r.stdout, "result: clean: 2 messages in 1 mailboxes (2 written before checksums: unchecked)") ||
		!strings.Contains(r.stdout, `format: "diagrelay-mailbox/1" (an older edition: serve migrates it in place`) {
		t.Errorf("mailbox check output:\n%s", r.stdout)
	}

	s := startServer(t, data, "")
	msgs := readMailbox(t, s.host, "/root", 0)
	if len(msgs) != 2 || msgs[0].ID != 1 || msgs[0].Message != "old one" || msgs[1].Message != "old two" ||
		!msgs[0].At.Equal(time.Unix(1767225600, 5)) {
		t.Fatalf("mailbox.read of first-edition records: %+v", msgs)
	}
	tok, _ := s.open("/root/y")
	if _, err := s.dial(tok).call("diagnostic.report", map[string]string{"level": "info", "message": "new"}); err != nil {
		t.Fatal(err)
	}
	if msgs := readMailbox(t, s.host, "/root", 0); len(msgs) != 3 || msgs[2].ID != 3 || msgs[2].Message != "new" {
		t.Fatalf("mailbox.read after a new report: %+v", msgs)
	}
	s.stop(syscall.SIGTERM)
	r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", data)
	wantExit(t, "mailbox check after a new report", r, 0, "")
	// serve migrated the file to the third edition (docs/mailbox.md).
	if row(r.stdout) != "/root 3 0 2" || !strings.Contains(r.stdout, "format: \"diagrelay-mailbox/3\"\n") {
		t.Errorf("mailbox check output:\n%s", r.stdout)
	}
}
