package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
)

// Open makes a missing directory 0700 and a new mailbox; the host token is
// written 0600 and read back as it was written; a directory, mailbox or
// token that others may read is refused by name, with the chmod that fixes
// it.
func TestOpenTokenAndPermissions(t *testing.T) {
	dir := filepath.Join(testutil.ShortTempDir(t), "data dir")
	store, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	tok, err := WriteHostToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadHostToken(dir); err != nil || got != tok+"\n" {
		t.Fatalf("read back %q, %v; wrote %q", got, err, tok)
	}
	for name, want := range map[string]os.FileMode{"": 0o700, MailboxFile: 0o600, HostTokenFile: 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%q: %v, %v; want mode %o", name, fi.Mode(), err, want)
		}
	}
	if err := CheckPermissions(dir); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, HostTokenFile), 0o640)
	os.Chmod(dir, 0o750)
	err = CheckPermissions(dir)
	if err == nil {
		t.Fatal("loose modes accepted")
	}
	for _, has := range []string{"chmod 700 '" + dir + "'", "chmod 600 '" + filepath.Join(dir, HostTokenFile) + "'", "(mode 0640)"} {
		if !strings.Contains(err.Error(), has) {
			t.Errorf("%q lacks %q", err, has)
		}
	}
	if strings.Contains(err.Error(), MailboxFile) {
		t.Errorf("the mailbox (0600) named: %v", err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("Open took a loose directory")
	}
}

// A file that is not a mailbox is refused and left as it is, with what to
// do about it.
func TestOpenRefusesUntrustedMailbox(t *testing.T) {
	dir := testutil.ShortTempDir(t)
	path := filepath.Join(dir, MailboxFile)
	junk := []byte(strings.Repeat("not a bbolt file ", 1000))
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil {
		t.Fatal("opened junk")
	}
	for _, has := range []string{"cannot be trusted", "diagrelay mailbox check --data " + dir, "mv " + path + " " + path + ".damaged"} {
		if !strings.Contains(err.Error(), has) {
			t.Errorf("%q lacks %q", err, has)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != string(junk) {
		t.Error("the refused file was changed")
	}
}

// A damaged file's recipient can be any bytes: the report quotes what is
// not a thread path, and says what serve does with the damage.
func TestWriteReport(t *testing.T) {
	var b strings.Builder
	WriteReport(&b, &mailbox.Report{Path: "/d/mailbox.db", Recipients: []mailbox.RecipientReport{
		{Recipient: "/root", Unacknowledged: 2, Damaged: 1, DamagedIDs: []uint64{7}},
		{Recipient: "\x1b]0;x\a", Unaddressable: 1},
	}})
	s := b.String()
	if strings.ContainsAny(s, "\x1b\a") {
		t.Fatalf("raw escape in %q", s)
	}
	for _, has := range []string{"bbolt consistency check: passed", "damaged ids for /root: 7\n", `"\x1b]0;x\a"`,
		"result: DAMAGED: 2 damaged records, 2 messages intact", "note: 1 entries have no message id"} {
		if !strings.Contains(s, has) {
			t.Errorf("no %q in:\n%s", has, s)
		}
	}
}
