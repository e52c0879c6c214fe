package service_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/relay"
)

// BenchmarkFairness measures, in one run, a well-behaved child's
// diagnostic.report round trip (admitted, so written durably to the bbolt
// mailbox before its reply) on an idle service, then while 64 other
// children flood pipelined reports as fast as they can. Every measured
// report goes to a fresh runtime (its hello is not timed), so the gate
// admits each one. The flooders run in a process of their own (this test
// binary again, as TestFloodHelper), as real children would: in this
// process their goroutines would delay the measuring one, not the server.
// Run it once:
//
//	go test -run NONE -bench Fairness -benchtime 1x ./service/
func BenchmarkFairness(b *testing.B) {
	const reports, flooders = 320, 64
	e := start(b, relay.ModeRPC)
	tokens := make([]string, 2*reports)
	for i := range tokens {
		tokens[i] = e.open(fmt.Sprintf("/root/good/g%d", i))
	}
	good, err := net.Dial("unix", e.socket)
	if err != nil {
		b.Fatal(err)
	}
	defer good.Close()
	gr := bufio.NewReader(good)
	next := 0
	roundTrips := func(n int) []time.Duration {
		ds := make([]time.Duration, 0, n)
		for range n {
			fmt.Fprintf(good, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tokens[next])
			next++
			if line, err := gr.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
				b.Fatalf("hello: %q %v", line, err)
			}
			begin := time.Now()
			fmt.Fprintf(good, `{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"warning","message":"good %d"}}`+"\n", next)
			line, err := gr.ReadString('\n')
			ds = append(ds, time.Since(begin))
			if err != nil || !strings.Contains(line, `"result":{}`) {
				b.Fatalf("report: %q %v", line, err)
			}
		}
		return ds
	}
	floodTokens := make([]string, flooders)
	for i := range floodTokens {
		floodTokens[i] = e.open(fmt.Sprintf("/root/flood%d", i))
	}
	b.ResetTimer()
	idle := roundTrips(reports)

	cmd := exec.Command(os.Args[0], "-test.run=^TestFloodHelper$")
	cmd.Env = append(os.Environ(), "DIAGRELAY_FLOOD_SOCKET="+e.socket, "DIAGRELAY_FLOOD_TOKENS="+strings.Join(floodTokens, ","))
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewReader(outPipe)
	count := func() int64 { // frames the flooders have had answered so far
		fmt.Fprintln(in, "count")
		line, err := out.ReadString('\n')
		if err != nil {
			b.Fatalf("flood helper: %v", err)
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		return n
	}
	count()                            // every flooder is connected
	time.Sleep(500 * time.Millisecond) // and at its pace
	f0, t0 := count(), time.Now()
	loaded := roundTrips(reports)
	rate := float64(count()-f0) / time.Since(t0).Seconds()
	b.StopTimer()
	in.Close()
	cmd.Wait()

	p := func(ds []time.Duration, q float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(p(idle, 0.5), "idle-p50-µs")
	b.ReportMetric(p(idle, 0.99), "idle-p99-µs")
	b.ReportMetric(p(loaded, 0.5), "loaded-p50-µs")
	b.ReportMetric(p(loaded, 0.99), "loaded-p99-µs")
	b.ReportMetric(p(loaded, 0.99)/p(idle, 0.99), "p99-ratio")
	b.ReportMetric(rate, "flood-frames/s")
}

// TestFloodHelper is BenchmarkFairness's flooding process: one connection
// per token in DIAGRELAY_FLOOD_TOKENS, each writing distinct reports
// pipelined as fast as it can while reading the replies. It answers each
// line on stdin with the number of replies read, and ends at stdin's end.
func TestFloodHelper(t *testing.T) {
	socket := os.Getenv("DIAGRELAY_FLOOD_SOCKET")
	if socket == "" {
		t.Skip("only run by BenchmarkFairness")
	}
	var frames atomic.Int64
	var ready sync.WaitGroup
	for i, tok := range strings.Split(os.Getenv("DIAGRELAY_FLOOD_TOKENS"), ",") {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ready.Add(1)
		go func() {
			fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
			ready.Done()
			w := bufio.NewWriterSize(c, 64<<10)
			for j := 0; ; j++ {
				if _, err := w.Write(reportFrame(j+1, fmt.Sprintf("flood %d message %d", i, j))); err != nil {
					return
				}
			}
		}()
		go func() {
			r := bufio.NewReaderSize(c, 64<<10)
			for {
				if _, err := r.ReadSlice('\n'); err != nil {
					return
				}
				frames.Add(1)
			}
		}()
	}
	ready.Wait()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println(frames.Load())
	}
	io.Copy(io.Discard, os.Stdin)
}
