package service

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
)

// Each connState is entered as its doc says, on a real socket: pending
// until hello, host and child (and one to the other by another hello),
// revoked for good by a reopen, then draining and closed; a pending peer
// at its hello deadline is gone, then closed.
func TestConnStates(t *testing.T) {
	clock := simclock.New(time.Unix(1e9, 0))
	const hostToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	s := New(Config{Mailbox: mailbox.NewMemory(), HostToken: hostToken, Now: clock.Now, AfterFunc: clock.AfterFunc,
		HelloTimeout: time.Minute})
	socket := filepath.Join(testutil.ShortTempDir(t), "s")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	known := map[*conn]bool{}
	// dial connects and returns the server's side of the new connection.
	dial := func() (*rpc.Conn, *conn) {
		t.Helper()
		nc, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		var found *conn
		testutil.Eventually(t, 5*time.Second, "the new connection served", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			for c := range s.conns {
				if !known[c] {
					found, known[c] = c, true
				}
			}
			return found != nil
		})
		return rpc.New(nc, nc, nc, rpc.Options{}), found
	}
	want := func(what string, c *conn, st connState) {
		t.Helper()
		if got := c.State(); got != st {
			t.Fatalf("%s: state %d, want %d", what, got, st)
		}
	}
	await := func(what string, c *conn, st connState) {
		t.Helper()
		testutil.Eventually(t, 5*time.Second, fmt.Sprintf("%s: state %d", what, st), func() bool { return c.State() == st })
	}

	host, hc := dial()
	want("a new socket peer", hc, statePending)
	if err := host.Call(wire.MethodHello, wire.HelloParams{Token: hostToken}, nil); err != nil {
		t.Fatal(err)
	}
	want("after the host's hello", hc, stateHost)
	var open wire.OpenResult
	if err := host.Call(wire.MethodRuntimeOpen, wire.OpenParams{Path: "/root/x"}, &open); err != nil {
		t.Fatal(err)
	}

	child, cc := dial()
	if err := child.Call(wire.MethodHello, wire.HelloParams{Token: open.Token}, nil); err != nil {
		t.Fatal(err)
	}
	want("after a child's hello", cc, stateChild)
	if err := child.Call(wire.MethodHello, wire.HelloParams{Token: hostToken}, nil); err != nil {
		t.Fatal(err)
	}
	want("a child after a hello with the host token", cc, stateHost)
	if err := child.Call(wire.MethodHello, wire.HelloParams{Token: open.Token}, nil); err != nil {
		t.Fatal(err)
	}
	want("and back", cc, stateChild)

	if err := host.Call(wire.MethodRuntimeOpen, wire.OpenParams{Path: "/root/x"}, nil); err != nil {
		t.Fatal(err)
	}
	await("a revoked child", cc, stateClosed)
	if cc.auth() != stateRevoked || !cc.stop.isSet() || cc.isGone() {
		t.Fatalf("a revoked child ended with auth %d, draining %v, gone %v", cc.auth(), cc.stop.isSet(), cc.isGone())
	}
	cc.authenticate(stateHost)
	if cc.auth() != stateRevoked {
		t.Fatal("a hello left stateRevoked")
	}

	_, pc := dial()
	want("a silent peer", pc, statePending)
	clock.Advance(time.Minute)
	await("a peer at its hello deadline", pc, stateClosed)
	if !pc.isGone() || pc.auth() != statePending {
		t.Fatalf("at its deadline: gone %v, auth %d", pc.isGone(), pc.auth())
	}
	want("the host, all along", hc, stateHost)
}
