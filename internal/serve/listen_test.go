package serve

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// Listen makes the socket 0600; a second Listen on a live socket is
// refused and leaves it working; a stale socket file is replaced; a file
// that is not a socket is never removed.
func TestListen(t *testing.T) {
	dir := testutil.ShortTempDir(t)
	path := filepath.Join(dir, "s")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", fi.Mode(), err)
	}
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "another server is listening") {
		t.Fatalf("second Listen: %v", err)
	}
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	if c, err := net.Dial("unix", path); err != nil {
		t.Fatalf("the first listener lost its socket: %v", err)
	} else {
		c.Close()
	}

	// A killed server leaves its file: keep it by not unlinking on close.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatal("no stale file to test with")
	}
	l2, err := Listen(path)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	l2.Close()

	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("keep"), 0o600)
	if _, err := Listen(plain); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("over a plain file: %v", err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "keep" {
		t.Fatal("the plain file was touched")
	}
}
