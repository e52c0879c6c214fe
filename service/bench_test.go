package service_test

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// pump writes frames on c from one goroutine while reading as many reply
// lines on another, as a pipelining child would.
func pump(b *testing.B, c net.Conn, frames [][]byte) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := bufio.NewWriterSize(c, 64<<10)
		for _, f := range frames {
			w.Write(f)
		}
		w.Flush()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	for range frames {
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
}

func reportFrame(id int, msg string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"warning","message":%q,"source":"noisy"}}`+"\n", id, msg)
}

// Report frames from flooding children over the Unix socket, as a child's
// would be: distinct text, so after the window's 5 every frame is a rate
// drop. Each connection is its own child.
func BenchmarkSocketFlood(b *testing.B) {
	for _, conns := range []int{4, 64} {
		b.Run(fmt.Sprintf("children=%d", conns), func(b *testing.B) { benchFlood(b, conns) })
	}
}

func benchFlood(b *testing.B, conns int) {
	e := start(b, relay.ModeRPC)
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.Dial("unix", e.socket)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		cs[i] = c
	}
	// Bind each raw connection to its own child.
	for i, c := range cs {
		tok := e.open(fmt.Sprintf("/root/raw%d", i))
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
		if _, err := bufio.NewReader(c).ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	frames := make([][][]byte, conns)
	per := b.N/conns + 1
	for i := range frames {
		frames[i] = make([][]byte, per)
		for j := range per {
			frames[i][j] = reportFrame(j+1, fmt.Sprintf("flood %d message %d", i, j))
		}
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pump(b, c, frames[i])
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(conns*per)/time.Since(start).Seconds(), "frames/s")
}

// Admitted reports, durably stored in the bbolt mailbox before each reply,
// from 1, 8 and 64 children at once: group commit batches their fsyncs.
// The clock moves 2 s per reading so the window never binds; each child
// has enough runtimes of its own that the cap does not either.
func BenchmarkSocketAdmittedDurable(b *testing.B) {
	for _, children := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("children=%d", children), func(b *testing.B) { benchDurable(b, children) })
	}
}

func benchDurable(b *testing.B, children int) {
	var tick atomic.Int64
	now := func() time.Time { return time.Unix(0, 0).Add(time.Duration(tick.Add(1)) * 2 * time.Second) }
	dir := b.TempDir()
	store, err := mailbox.Open(filepath.Join(dir, "mailbox.db"))
	if err != nil {
		b.Fatal(err)
	}
	e := startWith(b, relay.ModeRPC, store, now)
	per := b.N/children + 1
	type child struct {
		c      net.Conn
		frames [][]byte
	}
	cs := make([]child, children)
	for i := range cs {
		c, err := net.Dial("unix", e.socket)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		cs[i].c = c
		// One runtime per 20 reports: a hello frame switches the
		// connection to the next one (same pipelined stream).
		for j := range per {
			if j%20 == 0 {
				tok := e.open(fmt.Sprintf("/root/c%d/g%d", i, j/20))
				cs[i].frames = append(cs[i].frames, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok))
			}
			cs[i].frames = append(cs[i].frames, reportFrame(j+1, fmt.Sprintf("child %d report %d", i, j)))
		}
	}
	before := store.Stats()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pump(b, c.c, c.frames)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	after := store.Stats()
	posts := after.Posts - before.Posts
	if posts < uint64(children*per) {
		b.Fatalf("%d posts stored, want %d", posts, children*per)
	}
	b.ReportMetric(float64(posts)/elapsed.Seconds(), "posts/s")
	b.ReportMetric(float64(posts)/float64(after.Commits-before.Commits), "posts/commit")
}
