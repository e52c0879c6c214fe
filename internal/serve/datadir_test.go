package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// openData makes a missing directory 0700 and a new mailbox 0600, and
// refuses a directory that others may read.
func TestOpenData(t *testing.T) {
	dir := filepath.Join(testutil.ShortTempDir(t), "data dir")
	store, err := openData(dir)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	for name, want := range map[string]os.FileMode{"": 0o700, datadir.MailboxFile: 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%q: %v, %v; want mode %o", name, fi.Mode(), err, want)
		}
	}
	os.Chmod(dir, 0o750)
	if _, err := openData(dir); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("openData took a loose directory: %v", err)
	}
}

// A file that is not a mailbox is refused and left as it is, with what to
// do about it.
func TestOpenDataRefusesUntrustedMailbox(t *testing.T) {
	dir := testutil.ShortTempDir(t)
	path := filepath.Join(dir, datadir.MailboxFile)
	junk := []byte(strings.Repeat("not a bbolt file ", 1000))
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := openData(dir)
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
