package service_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
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

// pumpAll pumps frames[i] on cs[i], every connection at once.
func pumpAll(b *testing.B, cs []net.Conn, frames [][][]byte) {
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { pump(b, c, frames[i]) })
	}
	wg.Wait()
}

func reportFrame(id int, msg string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"warning","message":%q,"source":"noisy"}}`+"\n", id, msg)
}

func helloFrame(token string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", token)
}

// hello binds the raw connection c to token's runtime and reads the reply.
func hello(b *testing.B, c net.Conn, token string) {
	c.Write(helloFrame(token))
	if _, err := bufio.NewReader(c).ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
}

// dialN dials n raw connections to e's socket, closed when b ends.
func dialN(b *testing.B, e *env, n int) []net.Conn {
	cs := make([]net.Conn, n)
	for i := range cs {
		c, err := net.Dial("unix", e.socket)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs
}

// floodFrames is per distinct report frames for each of n children.
func floodFrames(n, per int) [][][]byte {
	frames := make([][][]byte, n)
	for i := range frames {
		frames[i] = make([][]byte, per)
		for j := range per {
			frames[i][j] = reportFrame(j+1, fmt.Sprintf("flood %d message %d", i, j))
		}
	}
	return frames
}

// durableEnv serves a mailbox file in dir on a clock that moves 2 s per
// reading, so the rate window never binds.
func durableEnv(b *testing.B, dir string) *env {
	var tick atomic.Int64
	now := func() time.Time { return time.Unix(0, 0).Add(time.Duration(tick.Add(1)) * 2 * time.Second) }
	store, err := mailbox.Open(filepath.Join(dir, "mailbox.db"))
	if err != nil {
		b.Fatal(err)
	}
	return startWith(b, relay.ModeRPC, store, now)
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
	cs := dialN(b, e, conns)
	// Bind each raw connection to its own child.
	for i, c := range cs {
		hello(b, c, e.open(fmt.Sprintf("/root/raw%d", i)))
	}
	per := b.N/conns + 1
	frames := floodFrames(conns, per)
	b.ResetTimer()
	start := time.Now()
	pumpAll(b, cs, frames)
	b.ReportMetric(float64(conns*per)/time.Since(start).Seconds(), "frames/s")
}

// Admitted reports, durably stored in the bbolt mailbox before each reply,
// from 1, 8 and 64 children at once: group commit batches their fsyncs.
// The clock moves 2 s per reading so the window never binds; each child
// has enough runtimes of its own that the cap does not either.
//
// parents is how many recipients the reports go to: with parents=1 every
// runtime is a child of /root, with parents=N child i's runtimes are
// children of /root/c<i>. dir=tmpfs keeps the mailbox in /dev/shm (no
// disk at all), the ceiling the disk's rate is compared with. disk=probe
// is the disk's own rate in the same run (testutil.DiskProbe): quote
// posts/s as ratios to it and to each other. writeB/post is what this
// process had written to storage per report (/proc/self/io).
func BenchmarkSocketAdmittedDurable(b *testing.B) {
	b.Run("disk=probe", func(b *testing.B) { testutil.DiskProbe(b, b.TempDir()) })
	for _, c := range []struct{ children, parents int }{{1, 1}, {8, 8}, {64, 1}, {64, 64}} {
		for _, dir := range []string{"disk", "tmpfs"} {
			if dir == "tmpfs" && c.children != 64 {
				continue
			}
			b.Run(fmt.Sprintf("children=%d/parents=%d/dir=%s", c.children, c.parents, dir), func(b *testing.B) {
				benchDurable(b, c.children, c.parents, dataDir(b, dir))
			})
		}
	}
}

// dataDir is a fresh directory on the disk (t.TempDir) or on tmpfs
// (/dev/shm; skipped where there is none).
func dataDir(b *testing.B, kind string) string {
	if kind == "disk" {
		return b.TempDir()
	}
	d, err := os.MkdirTemp("/dev/shm", "diagrelay-bench")
	if err != nil {
		b.Skip("no tmpfs at /dev/shm:", err)
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func benchDurable(b *testing.B, children, parents int, dir string) {
	e := durableEnv(b, dir)
	store := e.store
	per := b.N/children + 1
	frames := make([][][]byte, children)
	for i := range frames {
		// One runtime per 20 reports: a hello frame switches the
		// connection to the next one (same pipelined stream).
		for j := range per {
			if j%20 == 0 {
				path := fmt.Sprintf("/root/c%d-g%d", i, j/20)
				if parents > 1 {
					path = fmt.Sprintf("/root/c%d/g%d", i%parents, j/20)
				}
				tok := e.open(path)
				frames[i] = append(frames[i], helloFrame(tok))
			}
			frames[i] = append(frames[i], reportFrame(j+1, fmt.Sprintf("child %d report %d", i, j)))
		}
	}
	// Dialed only now, after every runtime is open: a connection must say
	// hello within the hello timeout (2 s here), which opening hundreds of
	// runtimes first could use up on a loaded machine.
	cs := dialN(b, e, children)
	before := store.Stats()
	wrote, _ := testutil.WriteBytes()
	b.ResetTimer()
	start := time.Now()
	pumpAll(b, cs, frames)
	elapsed := time.Since(start)
	b.StopTimer()
	after := store.Stats()
	posts := after.Posts - before.Posts
	if posts < uint64(children*per) {
		b.Fatalf("%d posts stored, want %d", posts, children*per)
	}
	b.ReportMetric(float64(posts)/elapsed.Seconds(), "posts/s")
	b.ReportMetric(float64(posts)/float64(after.Commits-before.Commits), "posts/commit")
	if n, ok := testutil.WriteBytes(); ok {
		b.ReportMetric(float64(n-wrote)/float64(posts), "writeB/post")
	}
}

// BenchmarkSocketDurableLatency is the round trip of an admitted, so
// durable, report when 8 children each send one report and wait for its
// reply before the next (no pipelining: each child's wait is one commit
// shared with the others'), every report to a fresh runtime of its own
// parent. It reports the p50 and p99 of the round trips (ms), with the
// disk's own rate in the same run (disk=probe) and the p50 and p99 of the
// two fdatasyncs a commit needs, on the disk alone (disk=commit).
func BenchmarkSocketDurableLatency(b *testing.B) {
	b.Run("disk=probe", func(b *testing.B) { testutil.DiskProbe(b, b.TempDir()) })
	b.Run("disk=commit", func(b *testing.B) { testutil.DiskCommitProbe(b, b.TempDir()) })
	b.Run("children=8", func(b *testing.B) {
		const children = 8
		e := durableEnv(b, b.TempDir())
		per := max(b.N/children, 40) // at least 320 round trips for a p99
		rtts := make([][]time.Duration, children)
		conns := dialN(b, e, children)
		// One runtime per 20 reports, opened before the timing.
		tokens := make([][]string, children)
		for i := range tokens {
			for g := range (per + 19) / 20 {
				tokens[i] = append(tokens[i], e.open(fmt.Sprintf("/root/l%d/g%d", i, g)))
			}
		}
		b.ResetTimer()
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Go(func() {
				r := bufio.NewReader(c)
				for j := range per {
					if j%20 == 0 {
						c.Write(helloFrame(tokens[i][j/20]))
						if _, err := r.ReadSlice('\n'); err != nil {
							b.Error(err)
							return
						}
					}
					begin := time.Now()
					c.Write(reportFrame(j+1, fmt.Sprintf("latency %d report %d", i, j)))
					line, err := r.ReadSlice('\n')
					rtts[i] = append(rtts[i], time.Since(begin))
					if err != nil || !bytes.Contains(line, []byte(`"result":{}`)) {
						b.Errorf("report: %q %v", line, err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		all := slices.Concat(rtts...)
		slices.Sort(all)
		ms := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))]) / 1e6 }
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(ms(0.50), "p50-ms")
		b.ReportMetric(ms(0.99), "p99-ms")
		b.ReportMetric(float64(len(all)), "reports")
	})
}

// BenchmarkSocketDurableParentsPaired measures what
// BenchmarkSocketAdmittedDurable/children=64 does with 1 and with 64
// parents, but both in each benchmark run, on one server and one mailbox
// file: 64 children send pipelined admitted reports in rounds (20 each,
// every child on a fresh runtime per round), the rounds alternating
// between runtimes under one parent (/root) and under 64 parents, which
// one comes first alternating too, so that the drifting load of a shared
// machine falls on both alike. It reports the posts/s of each, their
// ratio (64/1) and the bytes written to storage per report of each.
func BenchmarkSocketDurableParentsPaired(b *testing.B) {
	const children, per = 64, 20 // per: diag.MaxPerGeneration, so one runtime a round
	e := durableEnv(b, b.TempDir())
	store := e.store
	conns := dialN(b, e, children)
	var took [2]time.Duration // [0] one parent, [1] 64 parents
	var wrote [2]int64
	var posts [2]uint64
	rounds := 0
	round := func(mode int) {
		frames := make([][][]byte, children)
		for i := range frames {
			path := fmt.Sprintf("/root/c%d-r%d", i, rounds)
			if mode == 1 {
				path = fmt.Sprintf("/root/c%d/r%d", i, rounds)
			}
			tok := e.open(path)
			frames[i] = append(frames[i], helloFrame(tok))
			for j := range per {
				frames[i] = append(frames[i], reportFrame(j+1, fmt.Sprintf("round %d child %d report %d", rounds, i, j)))
			}
		}
		before := store.Stats().Posts
		w0, _ := testutil.WriteBytes()
		start := time.Now()
		pumpAll(b, conns, frames)
		took[mode] += time.Since(start)
		w1, _ := testutil.WriteBytes()
		wrote[mode] += w1 - w0
		posts[mode] += store.Stats().Posts - before
	}
	for b.Loop() {
		round(rounds % 2)
		round(1 - rounds%2)
		rounds++
	}
	if want := uint64(rounds * children * per); posts[0] != want || posts[1] != want {
		b.Fatalf("posts %v, want %d each", posts, want)
	}
	rate := func(m int) float64 { return float64(posts[m]) / took[m].Seconds() }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(rate(0), "posts/s-1parent")
	b.ReportMetric(rate(1), "posts/s-64parents")
	b.ReportMetric(rate(1)/rate(0), "64/1")
	b.ReportMetric(float64(wrote[0])/float64(posts[0]), "writeB/post-1parent")
	b.ReportMetric(float64(wrote[1])/float64(posts[1]), "writeB/post-64parents")
}
