package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// handoff=1 hands it to a second goroutine and takes the reply back.
//
//	go test -run '^$' -bench FloorOneChild -benchtime 3x ./cmd/diagrelay/
func BenchmarkFloorOneChild(b *testing.B) {
	for _, handoff := range []string{"0", "1"} {
		b.Run("handoff="+handoff, func(b *testing.B) {
			dir := b.TempDir()
			sock := filepath.Join(testutil.ShortTempDir(b), "s")
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), floorEnv+"="+sock+" "+filepath.Join(dir, "log")+" "+handoff)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer cmd.Wait()
			var c net.Conn
			testutil.Eventually(b, 10*time.Second, "the floor server listens", func() bool {
				var err error
				c, err = net.Dial("unix", sock)
				return err == nil
			})
			defer c.Close()
			r := bufio.NewReader(c)
			const requests = 500
			frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"warning","message":"x"}}` + "\n")
			var took, cpu time.Duration
			var fsyncs float64
			n := 0
			for b.Loop() {
				fsyncs += testutil.FsyncRate(b, dir, 500) / 2
				cpu0, t0 := cpuTime(b, cmd.Process.Pid), time.Now()
				for range requests {
					if _, err := c.Write(frame); err != nil {
						b.Fatal(err)
					}
					if _, err := r.ReadSlice('\n'); err != nil {
						b.Fatal(err)
					}
				}
				took += time.Since(t0)
				cpu += cpuTime(b, cmd.Process.Pid) - cpu0
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

// floorServe is the floor server: it answers each line on the one
// connection to its socket after writing the line to its file and
// flushing it, and ends when that connection does.
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
	c, err := l.Accept()
	if err != nil {
		return fail(err)
	}
	var off int64
	commit := func(line []byte) []byte {
		f.WriteAt(line, off)
		off += int64(len(line))
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return nil
		}
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	}
	work, done := make(chan []byte), make(chan []byte)
	go func() {
		for line := range work {
			done <- commit(line)
		}
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0
		}
		var reply []byte
		if args[2] == "1" {
			work <- line
			reply = <-done
		} else {
			reply = commit(line)
		}
		if reply == nil {
			return fail(fmt.Errorf("fdatasync failed"))
		}
		if _, err := c.Write(reply); err != nil {
			return 0
		}
	}
}
