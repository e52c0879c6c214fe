package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// mailboxWith runs a real serve on a fresh data directory, delivers one
// report per message from /root/x to /root, stops serve cleanly and
// returns the directory.
func mailboxWith(t *testing.T, messages ...string) (data string) {
	t.Helper()
	s := startServer(t, "", "")
	tok, _ := s.open("/root/x")
	c := s.dial(tok)
	for _, m := range messages {
		if _, err := c.call("diagnostic.report", map[string]string{"level": "info", "message": m}); err != nil {
			t.Fatal(err)
		}
	}
	s.stop(syscall.SIGTERM)
	return s.data
}

// mailboxFile returns the path of data's mailbox.db and its bytes.
func mailboxFile(t *testing.T, data string) (path string, file []byte) {
	t.Helper()
	path = filepath.Join(data, datadir.MailboxFile)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, file
}

// recordAt is where text stands in file, which must hold it.
func recordAt(t *testing.T, file []byte, text string) int {
	t.Helper()
	i := bytes.Index(file, []byte(text))
	if i < 0 {
		t.Fatalf("the record %q is not in the file", text)
	}
	return i
}

// serve refuses a mailbox.db it cannot trust: exit 1, an error that names
// the file and says what to do, and the file left byte for byte as it was.
func TestServeRefusesUntrustedMailbox(t *testing.T) {
	path, orig := mailboxFile(t, mailboxWith(t, "one", "two", "three"))
	used := testutil.BoltUsedBytes(t, path)
	idx := recordAt(t, orig, `"message":"two"`) // inside a record, so inside a leaf page
	leaf := idx / 4096 * 4096
	rnd := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rnd.Uint32())
	}
	// Keys out of order: message 2's key (its id, then its recipient,
	// docs/mailbox.md) turned into 99 wherever it stands before a version
	// 2 record (a leaf holds a key, then its value), so
	// that the keys read 1, 99, 3. Every page, key and value still reads;
	// only bbolt's consistency check sees it. (It checks the order only in
	// a bucket with pages of its own: a bucket of a few messages is stored
	// inline, where the records' checksums catch the damage instead.)
	long := make([]string, 4) // few enough that the gate lets each through
	for i := range long {
		long[i] = fmt.Sprintf("message %d %s", i+1, strings.Repeat("x", 500))
	}
	key := func(id byte) []byte { return append([]byte{0, 0, 0, 0, 0, 0, 0, id}, "/root\x02"...) }
	_, many := mailboxFile(t, mailboxWith(t, long...))
	unordered := bytes.ReplaceAll(many, key(2), key(99))
	if bytes.Equal(unordered, many) {
		t.Fatal("message 2's key is not in the file")
	}
	variants := map[string][]byte{
		"empty":            {},
		"random bytes":     random,
		"not bbolt":        bytes.Repeat([]byte("mailbox\n"), 9000),
		"truncated":        orig[:used-4096],
		"zeroed leaf page": slices.Concat(orig[:leaf], make([]byte, 4096), orig[leaf+4096:]),
	}
	variants["keys out of order"] = unordered
	for name, content := range variants {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(shortTempDir(t), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, datadir.MailboxFile)
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			r := runDiagrelay(t, nil, "", "serve", "--stdio", "--data", dir)
			wantExit(t, "serve on a damaged mailbox", r, 1, p+" cannot be trusted")
			if name == "keys out of order" && !strings.Contains(r.stderr, "bbolt's consistency check") {
				t.Errorf("not refused by bbolt's consistency check:\n%s", r.stderr)
			}
			for _, has := range []string{"diagrelay mailbox check --data " + dir, "mv " + p + " " + p + ".damaged", "left as it is"} {
				if !strings.Contains(r.stderr, has) {
					t.Errorf("stderr does not say %q:\n%s", has, r.stderr)
				}
			}
			if after, err := os.ReadFile(p); err != nil || !bytes.Equal(after, content) {
				t.Errorf("the refused file changed (%d bytes, was %d): %v", len(after), len(content), err)
			}
			if _, err := os.Stat(filepath.Join(dir, datadir.HostTokenFile)); err == nil {
				t.Error("serve wrote host.token before refusing the mailbox")
			}
			r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", dir)
			wantExit(t, "mailbox check", r, 1, "")
			if !strings.Contains(r.stdout, "problem: ") || !strings.Contains(r.stdout, "result: DAMAGED") {
				t.Errorf("mailbox check output:\n%s", r.stdout)
			}
		})
	}
}

// A record damaged in the file (its text edited in place, a byte flipped)
// is quarantined by a real serve: mailbox.read returns the others and
// lists it in damaged; mailbox.ack removes it; reports to the same
// recipient go on being stored and read.
func TestServeQuarantinesDamagedRecord(t *testing.T) {
	data := mailboxWith(t, "first untrusted", "second untrusted", "third untrusted")
	path, b := mailboxFile(t, data)
	i := recordAt(t, b, "second untrusted")
	copy(b[i+len("second "):], "TRUSTED!!")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	r := runDiagrelay(t, nil, "", "mailbox", "check", "--data", data)
	wantExit(t, "mailbox check", r, 1, "")
	if !strings.Contains(r.stdout, "damaged ids for /root: 2\n") || !strings.Contains(r.stdout, "1 damaged records, 2 messages intact") {
		t.Errorf("mailbox check output:\n%s", r.stdout)
	}

	s := startServer(t, data, "")
	var page wire.Page
	if err := s.host.callInto("mailbox.read", map[string]any{"recipient": "/root"}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 2 || page.Messages[0].Message != "first untrusted" || page.Messages[1].Message != "third untrusted" ||
		!slices.Equal(page.Damaged, []uint64{2}) {
		t.Fatalf("mailbox.read: %+v", page)
	}
	tok, _ := s.open("/root/y")
	if _, err := s.dial(tok).call("diagnostic.report", map[string]string{"level": "info", "message": "after the damage"}); err != nil {
		t.Fatal(err)
	}
	var acked wire.AckResult
	if err := s.host.callInto("mailbox.ack", map[string]any{"recipient": "/root", "ids": []uint64{2, page.Messages[0].ID}}, &acked); err != nil || acked.Acked != 2 {
		t.Fatalf("mailbox.ack of the damaged id: %+v, %v", acked, err)
	}
	page.Damaged = nil
	if err := s.host.callInto("mailbox.read", map[string]any{"recipient": "/root"}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 2 || page.Messages[1].Message != "after the damage" || page.Damaged != nil {
		t.Fatalf("mailbox.read after the ack: %+v", page)
	}
	s.stop(syscall.SIGTERM)
	r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", data)
	wantExit(t, "mailbox check after the ack", r, 0, "")
	if !strings.Contains(r.stdout, "result: clean: 2 messages in 1 mailboxes") {
		t.Errorf("mailbox check output:\n%s", r.stdout)
	}
}

// serve refuses a data directory, mailbox.db or host.token that group or
// others can access, naming each and the chmod that fixes it; after that
// chmod it starts.
func TestServeRefusesLoosePermissions(t *testing.T) {
	data := mailboxWith(t, "kept")
	for _, c := range []struct {
		name string
		mode os.FileMode
		fix  string
	}{
		{"", 0o755, "chmod 700 " + data},
		{"", 0o701, "chmod 700 " + data},
		{datadir.MailboxFile, 0o644, "chmod 600 " + filepath.Join(data, datadir.MailboxFile)},
		{datadir.MailboxFile, 0o620, "chmod 600 " + filepath.Join(data, datadir.MailboxFile)},
		{datadir.HostTokenFile, 0o604, "chmod 600 " + filepath.Join(data, datadir.HostTokenFile)},
	} {
		path := filepath.Join(data, c.name)
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		r := runDiagrelay(t, nil, "", "serve", "--stdio", "--data", data)
		wantExit(t, c.fix, r, 1, "fix it with: "+c.fix)
		if !strings.Contains(r.stderr, "accessible by group or others") {
			t.Errorf("%s: %s", c.fix, r.stderr)
		}
		fix := strings.Fields(c.fix)
		if out, err := exec.Command(fix[0], fix[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", c.fix, err, out)
		}
	}
	s := startServer(t, data, "")
	if msgs := readMailbox(t, s.host, "/root", 0); len(msgs) != 1 || msgs[0].Message != "kept" {
		t.Errorf("after the fixes: %+v", msgs)
	}
}

// Under umask 000 serve still creates its directory 0700 and its files
// 0600, so it accepts them on the next start.
func TestServeUnderUmaskZero(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "a", "data")
	for range 2 {
		cmd := diagrelayCmd(context.Background(), t, nil, "serve", "--stdio", "--data", dir)
		// umask is per process: set it in a shell that then becomes serve.
		cmd.Args = append([]string{"sh", "-c", `umask 000 && exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = "/bin/sh"
		cmd.Stdin = strings.NewReader("")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("serve under umask 000: %v\n%s", err, out)
		}
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Dir(dir), 0o700},
		{dir, 0o700},
		{filepath.Join(dir, datadir.MailboxFile), 0o600},
		{filepath.Join(dir, datadir.HostTokenFile), 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != c.want {
			t.Errorf("%s: mode %04o, want %04o", c.path, perm, c.want)
		}
	}
}
