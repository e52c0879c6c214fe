//go:build linux

package serve

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// TestListenBacklogIsTheSystemMax: the socket serve listens on queues as
// many connections as the system lets a listener queue
// (net.core.somaxconn), so a burst of connects waits for accept instead
// of being refused with EAGAIN. Counted by connecting to a listener that
// does not accept until the kernel refuses.
func TestListenBacklogIsTheSystemMax(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		t.Skip(err)
	}
	max, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testutil.ShortTempDir(t), "s")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for len(held) <= max+1 {
		c, err := net.Dial("unix", path)
		if errors.Is(err, syscall.EAGAIN) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The kernel queues one more than the backlog it was given.
	if n := len(held); n != max+1 {
		t.Fatalf("the listener queued %d connections; the system allows %d (+1)", n, max)
	}
}
