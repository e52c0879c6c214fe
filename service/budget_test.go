package service

import (
	"net"
	"testing"
	"time"
)

// socketConn is a conn with a socket, as the budget sees it; the pipe is
// never read or written.
func socketConn(t *testing.T, s *Server) *conn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return s.newConn(a, a, false)
}

// The total is kept, the peer whose writer made no progress for longest
// goes first, a reader moves to the back, and the connection queueing a
// frame goes itself when it is the oldest.
func TestUnsentBudgetOrder(t *testing.T) {
	s := New(Config{Mailbox: nil})
	b := newUnsentBudget(100)
	a, c, d := socketConn(t, s), socketConn(t, s), socketConn(t, s)
	for _, x := range []*conn{a, c, d} {
		if ok, v := b.take(x, 30); !ok || v != nil {
			t.Fatalf("take under the total: %v %v", ok, v)
		}
	}
	b.wrote(a, 10) // a reads: now the newest progress
	if b.total() != 80 {
		t.Fatalf("total %d, want 80", b.total())
	}
	ok, victims := b.take(d, 40) // 120 > 100: c has waited longest
	if !ok || len(victims) != 1 || victims[0] != c {
		t.Fatalf("take over the total: %v, victims %v, want c", ok, victims)
	}
	if b.total() != 90 {
		t.Fatalf("total %d after evicting c, want 90 (a 20, d 70)", b.total())
	}
	// d is now the oldest non-reader: passing the total again costs d.
	if ok, victims := b.take(d, 20); ok || len(victims) != 0 {
		t.Fatalf("the oldest asking again: %v %v, want refused with no victims", ok, victims)
	}
	b.wrote(c, 30) // a victim's writer reporting late changes nothing
	if b.total() != 90 {
		t.Fatalf("total %d, want 90", b.total())
	}
	b.forget(d)
	b.wrote(a, 20)
	if b.total() != 0 || b.queued.Len() != 0 {
		t.Fatalf("total %d, %d queued, want none", b.total(), b.queued.Len())
	}
	host := s.newConn(nil, nil, true) // the stdio host is not counted
	if ok, _ := b.take(host, 1000); !ok || b.total() != 0 {
		t.Fatalf("the stdio host counted: %v %d", ok, b.total())
	}
}

// A bucket refills at its rate up to its burst, can be overdrawn, and
// says how long until it is not.
func TestCostBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := newCostBucket(1000, 4000, t0)
	b.charge(t0, 3000)
	if d := b.debt(t0); d != 0 {
		t.Fatalf("debt %v with credit left", d)
	}
	b.charge(t0, 3000) // 2000 overdrawn
	if d := b.debt(t0); d != 2*time.Second {
		t.Fatalf("debt %v, want 2s", d)
	}
	if d := b.debt(t0.Add(1500 * time.Millisecond)); d != 500*time.Millisecond {
		t.Fatalf("debt %v after 1.5 s, want 0.5s", d)
	}
	if d := b.debt(t0.Add(time.Hour)); d != 0 {
		t.Fatalf("debt %v after an hour", d)
	}
	b.charge(t0.Add(time.Hour), 4000) // refilled to the burst, not beyond
	if d := b.debt(t0.Add(time.Hour)); d != 0 {
		t.Fatalf("debt %v: the burst was not refilled", d)
	}
	b.charge(t0.Add(time.Hour), 1)
	if d := b.debt(t0.Add(time.Hour)); d != time.Millisecond {
		t.Fatalf("debt %v, want 1ms: refilled past the burst", d)
	}
}
