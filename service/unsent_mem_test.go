package service

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
)

// What a byte of unsent replies costs in memory: 16 socket peers that
// never read, each with close to Config.MaxUnsent (1 MiB) of the smallest
// replies queued (a probe's, about 60 bytes: the worst case for any
// per-reply overhead), and the heap they hold measured. The queue is one
// contiguous buffer per peer (budget.go), so the heap is the bytes counted
// and the buffer's growth, not the ~3x a slice of per-reply allocations
// cost (service/doc.go).
func TestUnsentRepliesCostTheirBytes(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("fills 16 MiB of replies; measures memory, which the race detector changes")
	}
	const peers = 16
	s := New(Config{Mailbox: mailbox.NewMemory(), CostRate: 1 << 30, CostBurst: 1 << 30, MaxUnsentTotal: 1 << 30})
	dir, err := os.MkdirTemp("", "dr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	defer l.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// Each peer is filled to 60 % of its bound: the frames still in its
	// socket when the writing stops (about 220 KB, as many bytes of
	// replies) take it to about 85 %, never past it.
	conns := fillUnsent(t, s, filepath.Join(dir, "s"), peers)
	settle(t, s, conns)
	unsent := s.budget.total()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapInuse) - int64(before.HeapInuse)
	ratio := float64(heap) / float64(unsent)
	t.Logf("%d bytes unsent to %d peers hold %d bytes of heap: %.2fx", unsent, peers, heap, ratio)
	if s.Stats().SlowPeers != 0 || s.Stats().OverBudget != 0 {
		t.Fatalf("a peer was disconnected: %+v", s.Stats())
	}
	if ratio > 2.2 {
		t.Errorf("unsent replies cost %.2fx their bytes in heap, want at most 2.2x (a buffer's doubling)", ratio)
	}
}

// settle waits until the server has handled every frame fillUnsent wrote
// to conns: a connection's requests are handled in order, so once a report
// written after them is in its thread's status, every probe before it has
// been answered. The newline first ends a probe that a write deadline cut
// short (answered with a parse error).
func settle(t *testing.T, s *Server, conns []net.Conn) {
	t.Helper()
	for _, c := range conns {
		c.SetWriteDeadline(time.Time{})
		if _, err := io.WriteString(c, "\n"+`{"jsonrpc":"2.0","id":2,"method":"diagnostic.report","params":{"level":"info","message":"settled"}}`+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 30*time.Second, "every peer's frames handled", func() bool {
		for i := range conns {
			if st, _ := s.mgr.Status(fmt.Sprintf("/root/m%d", i)); len(st.Diagnostics) == 0 {
				return false
			}
		}
		return true
	})
}
