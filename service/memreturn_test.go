package service

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
)

// memServer is a Server on a fresh socket with the simulated clock, its
// ReturnMemory counted (and then run, when real is set).
func memServer(t *testing.T, real bool, c Config) (*Server, string, *simclock.Clock, *atomic.Int64) {
	t.Helper()
	clk := simclock.New(time.Unix(1e9, 0))
	var calls atomic.Int64
	c.Mailbox = mailbox.NewMemory()
	c.Now, c.AfterFunc = clk.Now, clk.AfterFunc
	c.ReturnMemory = func() {
		calls.Add(1)
		if real {
			returnMemory()
		}
	}
	s := New(c)
	dir, err := os.MkdirTemp("", "dr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { l.Close() })
	return s, sock, clk, &calls
}

// burst connects n pending peers, waits until the server holds them, then
// closes them and waits until it has let them go.
func burst(t *testing.T, s *Server, sock string, n int) {
	t.Helper()
	base := ConnCount(s)
	var cs []net.Conn
	for range n {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	waitConns(t, s, func(k int) bool { return k == base+n })
	for _, c := range cs {
		c.Close()
	}
	waitConns(t, s, func(k int) bool { return k == base })
}

func waitConns(t *testing.T, s *Server, ok func(int) bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "the connections gone", func() bool { return ok(ConnCount(s)) })
}

// When memory is given back: a second after a flood of connections has
// left, at most once per memReturnEvery, and never for a few.
func TestMemoryReturnsAfterAFloodLeaves(t *testing.T) {
	s, sock, clk, calls := memServer(t, false, Config{})
	burst(t, s, sock, memFloodConns-1)
	clk.Advance(2 * memReturnDelay)
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d connections leaving returned memory %d times, want none (under memFloodConns)", memFloodConns-1, n)
	}

	burst(t, s, sock, 32)
	clk.Advance(memReturnDelay - time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Fatalf("returned %d times before memReturnDelay", n)
	}
	clk.Advance(time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("returned %d times a second after 32 connections left, want 1", n)
	}

	// Another flood at once: rate-limited to memReturnEvery after the first.
	burst(t, s, sock, 32)
	clk.Advance(memReturnDelay)
	if n := calls.Load(); n != 1 {
		t.Fatalf("returned %d times within memReturnEvery, want 1", n)
	}
	clk.Advance(memReturnEvery - memReturnDelay)
	if n := calls.Load(); n != 2 {
		t.Fatalf("returned %d times at memReturnEvery after the first, want 2", n)
	}
	if st := s.Stats(); st.MemoryReturns != 2 {
		t.Fatalf("Stats.MemoryReturns = %d, want 2", st.MemoryReturns)
	}
	clk.Advance(time.Minute)
	if n := calls.Load(); n != 2 {
		t.Fatalf("returned %d times with nothing leaving, want still 2", n)
	}
}

// A connect churn, whose connections never raise the count: after
// memChurnAccepts accepts, memory is returned once connections stop
// arriving, not while they go on.
func TestMemoryReturnsAfterAConnectChurn(t *testing.T) {
	s, sock, clk, calls := memServer(t, false, Config{})
	churn := func(n int) {
		t.Helper()
		want := s.mem.accepted.Load() + uint64(n)
		for range n {
			c, err := net.Dial("unix", sock)
			for err != nil { // a full backlog: EAGAIN, as under any churn
				time.Sleep(time.Millisecond)
				c, err = net.Dial("unix", sock)
			}
			c.Close()
		}
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%d connections accepted", want), func() bool { return s.mem.accepted.Load() >= want })
	}
	churn(memChurnAccepts + 4)
	churn(memQuietAccepts + 1) // still arriving when the return is due
	clk.Advance(memReturnDelay)
	if n := calls.Load(); n != 0 {
		t.Fatalf("returned %d times while connections kept arriving, want none", n)
	}
	clk.Advance(memReturnDelay)
	if n := calls.Load(); n != 1 {
		t.Fatalf("returned %d times a second after the churn stopped, want 1", n)
	}
}

// A flood that leaves memory behind: 16 child peers that never read,
// about 10 MiB of probe replies queued for them, then gone. A second after,
// the server gives the heap back: what the process holds of its heap
// (HeapSys-HeapReleased: in use, and free but not returned) is within
// 4 MiB of what it was before the flood. Without the return it stays
// (the check that the flood grew it makes the test able to fail).
func TestFloodMemoryReturnsToTheSystem(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("queues 10 MiB of replies; measures memory, which the race detector changes")
	}
	const peers = 16
	s, sock, clk, calls := memServer(t, true, Config{CostRate: 1 << 30, CostBurst: 1 << 30})
	retained := func() int64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapSys) - int64(m.HeapReleased)
	}
	runtime.GC()
	debug.FreeOSMemory()
	before := retained()

	conns := fillUnsent(t, s, sock, peers)
	peak := retained()
	for _, c := range conns {
		c.Close()
	}
	waitConns(t, s, func(k int) bool { return k == 0 })
	waitDrained(t, s)
	left := retained()
	if grew := peak - before; grew < 8<<20 {
		t.Fatalf("the flood grew the retained heap by %d bytes only: the test measures nothing", grew)
	}
	clk.Advance(memReturnDelay)
	if calls.Load() != 1 {
		t.Fatalf("ReturnMemory ran %d times a second after the flood left, want 1", calls.Load())
	}
	after := retained()
	t.Logf("heap held: before %.1f MiB, at the flood's peak %.1f, when it had left %.1f, a second later %.1f",
		mb(before), mb(peak), mb(left), mb(after))
	if after-before > 4<<20 {
		t.Errorf("a second after the flood left the process holds %.1f MiB of heap, %.1f more than before it; want at most 4 MiB more",
			mb(after), mb(after-before))
	}
}

// fillUnsent connects peers children that never read and queues about
// 0.6 MiB of probe replies for each: under each one's bound, so none is
// disconnected.
func fillUnsent(t *testing.T, s *Server, sock string, peers int) []net.Conn {
	t.Helper()
	probe := []byte(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}` + "\n")
	var chunk []byte
	for range 512 {
		chunk = append(chunk, probe...)
	}
	var conns []net.Conn
	for i := range peers {
		rt, err := s.mgr.Open(fmt.Sprintf("/root/m%d", i), "", "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.tokens.bind(rt, nil, nil, s.now())
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", b.token)
		bufio.NewReader(c) // never read
		conns = append(conns, c)
	}
	want := peers * DefaultMaxUnsent * 6 / 10
	end := time.Now().Add(30 * time.Second)
	for i, c := range conns {
		for s.budget.total() < want*(i+1)/peers {
			if time.Now().After(end) {
				t.Fatalf("only %d bytes unsent after 30 s", s.budget.total())
			}
			c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			c.Write(chunk)
		}
	}
	return conns
}

func waitDrained(t *testing.T, s *Server) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "no bytes counted unsent after the peers left", func() bool { return s.budget.total() == 0 })
}

// Fewer connections than memFloodConns, but over memFloodUnsent of
// replies queued for them: their leaving returns memory too.
func TestMemoryReturnsAfterUnsentDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("queues 5 MiB of replies")
	}
	s, sock, clk, calls := memServer(t, false, Config{CostRate: 1 << 30, CostBurst: 1 << 30})
	conns := fillUnsent(t, s, sock, 8) // about 4.8 MiB
	if got := s.budget.total(); got < memFloodUnsent {
		t.Fatalf("%d bytes unsent, want over memFloodUnsent", got)
	}
	for _, c := range conns {
		c.Close()
	}
	waitConns(t, s, func(k int) bool { return k == 0 })
	waitDrained(t, s)
	clk.Advance(memReturnDelay)
	if n := calls.Load(); n != 1 {
		t.Fatalf("returned %d times a second after 8 peers with 4.8 MiB unsent left, want 1", n)
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
