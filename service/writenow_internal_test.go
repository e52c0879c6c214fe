package service

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
)

// servedSocket is a served connection over a real socket, and its peer.
func servedSocket(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	s := New(Config{Mailbox: mailbox.NewMemory(), MaxUnsent: 1 << 30, MaxUnsentTotal: 1 << 30})
	l, err := net.Listen("unix", filepath.Join(testutil.ShortTempDir(t), "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	peer, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := s.newConn(nc, nc, false)
	if c.tryWrite == nil {
		t.Skip("no descriptor to write without waiting")
	}
	c.ownHandler = true
	return c, peer
}

// idleWriter waits until c has nothing unsent and no writer runs.
func idleWriter(t *testing.T, c *conn) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "nothing unsent and no writer", func() bool {
		c.qmu.Lock()
		defer c.qmu.Unlock()
		return c.unsent == 0 && !c.writing && len(c.queue) == 0
	})
	if got := c.s.budget.total(); got != 0 {
		t.Errorf("%d bytes still counted in the budget", got)
	}
}

// A reply written at once from the goroutine that queued it (writeNow)
// and what the writer goroutine writes after it are one stream, whatever
// the socket takes of the first write and whatever is queued while it
// runs: the peer reads every byte once, in order; then nothing is unsent
// and no writer runs. finish called during the write leaves the writer to
// close written.
func TestWriteNow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		take      func(n int) (int, error) // what the socket takes of n bytes
		meanwhile bool                     // a frame is queued during the write
		finish    bool                     // finish is called during the write
	}{
		{name: "all", take: func(n int) (int, error) { return n, nil }},
		{name: "part", take: func(n int) (int, error) { return n / 3, nil }},
		{name: "none", take: func(int) (int, error) { return 0, nil }},
		{name: "failed", take: func(int) (int, error) { return 0, syscall.EINTR }},
		{name: "all+queued", take: func(n int) (int, error) { return n, nil }, meanwhile: true},
		{name: "part+queued", take: func(n int) (int, error) { return n / 3, nil }, meanwhile: true},
		{name: "all+finish", take: func(n int) (int, error) { return n, nil }, finish: true},
		{name: "part+finish", take: func(n int) (int, error) { return n / 3, nil }, finish: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, peer := servedSocket(t)
			first := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
			later := []byte(`{"jsonrpc":"2.0","method":"ui.notify","params":{}}` + "\n")
			real, calls := c.tryWrite, 0
			c.tryWrite = func(b []byte) (int, error) {
				calls++
				n, err := tc.take(len(b))
				if tc.meanwhile && !c.pushWithin(later, c.s.cfg.MaxUnsent, false, true) {
					t.Error("the frame queued meanwhile was refused")
				}
				if tc.finish {
					c.finish()
				}
				if err != nil {
					return 0, err
				}
				return real(b[:n])
			}
			if !c.push(first) {
				t.Fatal("refused")
			}
			want := string(first)
			if tc.meanwhile {
				want += string(later)
			}
			got := make([]byte, len(want))
			peer.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(peer, got); err != nil || string(got) != want {
				t.Fatalf("read %q (%v), want %q", got, err, want)
			}
			if calls != 1 {
				t.Errorf("%d writes without waiting, want 1 (the writer writes the rest)", calls)
			}
			if tc.finish {
				select {
				case <-c.written.done():
				case <-time.After(10 * time.Second):
					t.Fatal("finish during the write did not close written")
				}
				return
			}
			idleWriter(t, c)
			c.finish()
			<-c.written.done()
		})
	}
}

// Under concurrent pushes with a socket buffer far smaller than what is
// queued, the peer reads every frame once, each source's in order.
func TestWriteNowConcurrent(t *testing.T) {
	c, peer := servedSocket(t)
	c.nc.(*net.UnixConn).SetWriteBuffer(4096)
	const perSource, size = 300, 700
	frame := func(src string, i int) []byte {
		b := fmt.Appendf(nil, "%s %04d ", src, i)
		for len(b) < size-1 {
			b = append(b, 'x')
		}
		return append(b, '\n')
	}
	var wg sync.WaitGroup
	wg.Go(func() { // the loop's replies
		for i := range perSource {
			if !c.push(frame("reply", i)) {
				t.Errorf("reply %d refused", i)
			}
		}
	})
	wg.Go(func() { // notifications from another goroutine
		for i := range perSource {
			if !c.pushWithin(frame("note", i), c.s.cfg.MaxUnsent, false, true) {
				t.Errorf("notification %d refused", i)
			}
		}
	})
	next := map[string]int{}
	r := bufio.NewReader(peer)
	peer.SetReadDeadline(time.Now().Add(30 * time.Second))
	for range 2 * perSource {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %v: %v", next, err)
		}
		var src string
		var i int
		if _, err := fmt.Sscanf(string(line), "%s %d ", &src, &i); err != nil || len(line) != size {
			t.Fatalf("a damaged frame (%d bytes): %.40q", len(line), line)
		}
		if i != next[src] {
			t.Fatalf("%s %d after %d", src, i, next[src]-1)
		}
		next[src]++
	}
	wg.Wait()
	idleWriter(t, c)
}

// At most maxOwnHandlers connections handle their own frames at a time; a
// connection that ends gives its place back.
func TestOwnHandlersBounded(t *testing.T) {
	var h handlers
	for i := range maxOwnHandlers {
		if !h.claimOwn() {
			t.Fatalf("claim %d refused", i)
		}
	}
	if h.claimOwn() {
		t.Fatalf("claim %d granted", maxOwnHandlers)
	}
	h.releaseOwn()
	if !h.claimOwn() {
		t.Fatal("a place given back was not granted again")
	}
}
