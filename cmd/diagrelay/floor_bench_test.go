package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// floorEnv makes the test binary the server of BenchmarkFloorOneChild:
// "SOCKET FILE HANDOFF" (TestMain).
const floorEnv = "DIAGRELAY_BENCH_FLOOR"

// BenchmarkFloorOneChild is the anchor beside BenchmarkServeOneChild
// (docs/performance.md, "The cost of a report"): the least a
// request/reply server with one fdatasync per request does on this
// machine, in a process of its own, one client in a closed loop, as a
// ratio to the disk's fsyncs/s measured on the same file system before and
// after. handoff=0 handles each line on the connection's goroutine;
// handoff=1 hands it to a second goroutine and takes the reply back;
// lives=5 is handoff=0 with ServeOneChild's lives (dial, a hello line
// that is not flushed, 5 flushed lines, hang up), its flushed lines
// counted.
//
//	go test -run '^$' -bench FloorOneChild -benchtime 3x ./cmd/diagrelay/
func BenchmarkFloorOneChild(b *testing.B) {
	for _, v := range []struct {
		name, handoff string
		lives         bool
	}{{"handoff=0", "0", false}, {"handoff=1", "1", false}, {"handoff=0/lives=5", "0", true}} {
		b.Run(v.name, func(b *testing.B) {
			dir := b.TempDir()
			pid, sock := startFloor(b, dir, v.handoff)
			const requests = 500
			round := func() {
				var rtts []time.Duration
				for range requests / reportsPerRuntime {
					if err := floorLife(sock, &rtts); err != nil {
						b.Fatal(err)
					}
				}
			}
			if !v.lives {
				c, err := net.Dial("unix", sock)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				r := bufio.NewReader(c)
				round = func() {
					for range requests {
						if _, err := floorRequest(c, r, floorFrame); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			var took, cpu time.Duration
			var fsyncs float64
			n := 0
			for b.Loop() {
				fsyncs += testutil.FsyncRate(b, dir, 500) / 2
				cpu0, t0 := cpuTime(b, pid), time.Now()
				round()
				took += time.Since(t0)
				cpu += cpuTime(b, pid) - cpu0
				n += requests
				fsyncs += testutil.FsyncRate(b, dir, 500) / 2
			}
			fsyncs /= float64(b.N)
			rate := float64(n) / took.Seconds()
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(fsyncs, "fsyncs/s")
			b.ReportMetric(rate, "requests/s")
			b.ReportMetric(rate/fsyncs, "requests/fsync")
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/request")
		})
	}
}

// BenchmarkFloorLatency8 is the anchor beside BenchmarkServeLatency8: the
// floor server above (each line on its connection's goroutine) with 8
// clients in closed loops shaped as ServeLatency8's children, after the
// same unmeasured round (dial, a
// hello line that is not flushed, 5 flushed lines each waiting for its
// reply, hang up), its lines' flushes shared (a group commit: one write
// and one fdatasync for every line that arrived during the previous
// one). It reports the flushed lines' p99 round trip against the disk's
// two-flush p99 (testutil.CommitPairs) in the same run: the ratio a
// server that does nothing but flush reaches on this machine.
//
//	go test -run '^$' -bench FloorLatency8 -benchtime 3x ./cmd/diagrelay/
func BenchmarkFloorLatency8(b *testing.B) {
	dir := b.TempDir()
	_, sock := startFloor(b, dir, "0")
	round := func(lives int) []time.Duration {
		got := make([][]time.Duration, latChildren)
		var wg sync.WaitGroup
		for i := range latChildren {
			wg.Go(func() {
				for range lives {
					if err := floorLife(sock, &got[i]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return slices.Concat(got...)
	}
	round(10) // unmeasured, as ServeLatency8's first round
	var rtts, pairs []time.Duration
	for b.Loop() {
		pairs = append(pairs, testutil.CommitPairs(b, dir, 200)...)
		rtts = append(rtts, round(latLives)...)
		pairs = append(pairs, testutil.CommitPairs(b, dir, 200)...)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(quantile(rtts, 0.5), "p50-ms")
	b.ReportMetric(quantile(rtts, 0.99), "p99-ms")
	b.ReportMetric(quantile(pairs, 0.99), "disk-p99-ms")
	b.ReportMetric(quantile(rtts, 0.99)/quantile(pairs, 0.99), "p99/disk-p99")
}

// floorFrame is a report's size; floorHello a line answered unflushed.
var floorFrame, floorHello = []byte(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"warning","source":"build","message":"step 3 of /root/lat/c1/r2: cache miss for module 421, fetched in 13 ms"}}` + "\n"), []byte("H\n")

// startFloor starts the floor server in a process of its own, its file
// under dir, and returns its pid and socket once it listens.
func startFloor(b *testing.B, dir, handoff string) (int, string) {
	sock := filepath.Join(testutil.ShortTempDir(b), "s")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), floorEnv+"="+sock+" "+filepath.Join(dir, "log")+" "+handoff)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testutil.Eventually(b, 10*time.Second, "the floor server listens", func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return cmd.Process.Pid, sock
}

// floorLife is one life of a floor benchmark's child, appending each flushed
// line's round trip to rtts.
func floorLife(sock string, rtts *[]time.Duration) error {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := floorRequest(c, r, floorHello); err != nil {
		return err
	}
	for range reportsPerRuntime {
		took, err := floorRequest(c, r, floorFrame)
		if err != nil {
			return err
		}
		*rtts = append(*rtts, took)
	}
	return nil
}

// floorRequest writes line and reads its reply.
func floorRequest(c net.Conn, r *bufio.Reader, line []byte) (time.Duration, error) {
	begin := time.Now()
	if _, err := c.Write(line); err != nil {
		return 0, err
	}
	if _, err := r.ReadSlice('\n'); err != nil {
		return 0, err
	}
	return time.Since(begin), nil
}

// floorServe is the floor server: it serves each connection to its
// socket on a goroutine of its own, answering each line after writing it
// to its file and flushing it (floorLog), a line "H" at once, and runs
// until killed.
func floorServe(spec string) int {
	args := strings.Fields(spec)
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, floorEnv, "wants SOCKET FILE HANDOFF, got", spec)
		return 2
	}
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "floor:", err); return 1 }
	l, err := net.Listen("unix", args[0])
	if err != nil {
		return fail(err)
	}
	f, err := os.OpenFile(args[1], os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fail(err)
	}
	// Blocks that exist and are durable: each fdatasync flushes data only.
	if err := f.Truncate(64 << 20); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	g := &floorLog{f: f}
	for {
		c, err := l.Accept()
		if err != nil {
			return fail(err)
		}
		go floorConn(c, g, args[2] == "1")
	}
}

// floorConn answers c's lines until it ends; handoff: on a second
// goroutine, taking each reply back.
func floorConn(c net.Conn, g *floorLog, handoff bool) {
	defer c.Close()
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	work, done := make(chan []byte), make(chan error)
	defer close(work)
	go func() {
		for line := range work {
			done <- g.commit(line)
		}
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		switch {
		case string(line) == "H\n":
		case handoff:
			work <- line
			err = <-done
		default:
			err = g.commit(line)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// floorLog is the floor's group commit, as the mailbox's (no timer, no
// goroutine): a line joins the batch forming; the first to join leads its
// commit (one write, one fdatasync) once the commit before is done, and
// the others wait for it.
type floorLog struct {
	f       *os.File
	mu      sync.Mutex
	off     int64 // the leader's alone
	leading bool
	forming *floorBatch
}

type floorBatch struct {
	buf  []byte
	lead chan struct{} // given to the first writer by the leader before
	done chan struct{} // closed when buf is flushed, err set
	err  error
}

func (g *floorLog) commit(line []byte) error {
	g.mu.Lock()
	b := g.forming
	if b == nil {
		b = &floorBatch{lead: make(chan struct{}, 1), done: make(chan struct{})}
		g.forming = b
	}
	first := len(b.buf) == 0
	b.buf = append(b.buf, line...)
	if g.leading {
		g.mu.Unlock()
		if !first {
			<-b.done
			return b.err
		}
		<-b.lead
		g.mu.Lock()
	}
	g.leading, g.forming = true, nil
	g.mu.Unlock()
	_, b.err = g.f.WriteAt(b.buf, g.off)
	g.off += int64(len(b.buf))
	if b.err == nil {
		b.err = syscall.Fdatasync(int(g.f.Fd()))
	}
	g.mu.Lock()
	if g.forming != nil {
		g.forming.lead <- struct{}{}
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	close(b.done)
	return b.err
}
