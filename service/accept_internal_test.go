//go:build unix

package service

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/peercred"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// What the drain takes from a listener's queue is a connection like one
// Accept gives, for everything the service asks of it: the peer's
// credentials, reads and writes both ways, a deadline, a wait that holds
// no buffer, a write that never waits, and the peer's leaving seen; a peer
// that left before the drain came is closed there and counted.
func TestDrainedConnectionsWorkAsAccepted(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(testutil.ShortTempDir(t), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const live = 6
	departed := 0
	ba := newBatchAccepter(l, func() { departed++ })
	if ba == nil {
		t.Skip("no batch accepter for this listener")
	}
	gone, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	var peers []net.Conn
	for range live {
		p, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		peers = append(peers, p)
	}
	first, err := l.Accept() // the departed peer, as Serve's Accept would take it
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	conns := ba.drain()
	if len(conns) != live || departed != 0 {
		// The departed peer was first in the queue, so Accept took it.
		t.Fatalf("drain took %d connections and closed %d departed, want %d and 0", len(conns), departed, live)
	}
	for i, nc := range conns {
		defer nc.Close()
		if _, ok := nc.(fileConn); !ok {
			t.Fatalf("drained connection %d is a %T", i, nc)
		}
		if cred := peercred.Of(nc); !cred.Known || cred.PID != os.Getpid() {
			t.Fatalf("connection %d: peer credentials %+v, want this process", i, cred)
		}
		wait := peercred.WaitReadable(nc)
		if wait == nil {
			t.Fatalf("connection %d: no wait without a buffer", i)
		}
		if _, err := peers[i].Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		if g, err := wait(); g || err != nil {
			t.Fatalf("connection %d: wait gave gone %v, %v", i, g, err)
		}
		if line, err := bufio.NewReader(nc).ReadString('\n'); line != "ping\n" || err != nil {
			t.Fatalf("connection %d read %q, %v", i, line, err)
		}
		tw := socketTryWrite(nc)
		if tw == nil {
			t.Fatalf("connection %d: no write that never waits", i)
		}
		if n, err := tw([]byte("pong\n")); n != 5 || err != nil {
			t.Fatalf("connection %d: try-write %d, %v", i, n, err)
		}
		if line, err := bufio.NewReader(peers[i]).ReadString('\n'); line != "pong\n" || err != nil {
			t.Fatalf("peer %d read %q, %v", i, line, err)
		}
		nc.SetReadDeadline(time.Now().Add(-time.Second))
		if _, err := nc.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection %d: a read past its deadline gave %v", i, err)
		}
		nc.SetReadDeadline(time.Time{})
		if peercred.Gone(nc) {
			t.Fatalf("connection %d: gone while its peer is there", i)
		}
		peers[i].Close()
		testutil.Eventually(t, 5*time.Second, "the peer's leaving seen", func() bool { return peercred.Gone(nc) })
	}
	// A departed peer met by the drain itself is closed there, not returned.
	late, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	late.Close()
	if conns := ba.drain(); len(conns) != 0 || departed != 1 {
		t.Fatalf("drain returned %d connections and counted %d departed, want 0 and 1", len(conns), departed)
	}
}
