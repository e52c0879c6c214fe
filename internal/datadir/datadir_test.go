package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// The host token is written 0600 and read back as it was written; a
// directory, mailbox or token that others may read is refused by name,
// with the chmod that fixes it.
func TestTokenAndPermissions(t *testing.T) {
	dir := filepath.Join(testutil.ShortTempDir(t), "data dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MailboxFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := WriteHostToken(dir, "a-token")
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
}
