package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/servetest"
)

// BenchmarkServeEdge is the fifth goal of docs/performance.md, "The cost of
// a report": an edge (the real binary as
// `serve --join`, beside a home, `serve --cluster`) publishing its 8
// children's admitted reports, each child waiting for each reply (so for
// its PubAck), against 8 raw nats.go publishers that each publish a
// message of the same size with a message id and wait for its PubAck, to
// a stream of the same configuration on the same synced JetStream
// (embedded, sync always), in alternating phases. Every runtime is opened
// and claimed (its hello) before the phases, as a child that has said
// hello once reports from then on. The raw publishers run in a process
// of their own, as the edge does. It reports reports/s of each and
// edge/raw.
//
//	go test -run '^$' -bench ServeEdge -benchtime 3x ./cmd/diagrelay/
func BenchmarkServeEdge(b *testing.B) {
	const children, lives = 8, 20 // a phase: 8 x 20 x 5 = 800 reports
	ns := natstest.Start(b)
	dir := shortTempDir(b)
	home := startReal(b, filepath.Join(dir, "home"), "--cluster", ns.URL, "--nats-monitor", ns.MonitorURL)
	bin := costBinary(b)
	edgeSock := filepath.Join(dir, "e.sock")
	startEdgeWith(b, func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }, ns, filepath.Join(dir, "edge"), edgeSock)

	nc, err := nats.Connect(ns.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	// As cluster/config.go makes the cluster's stream.
	if _, err := js.CreateOrUpdateStream(context.Background(), jetstream.StreamConfig{Name: "RAWBENCH", Subjects: []string{"rawbench.*"},
		Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy, Discard: jetstream.DiscardNew,
		MaxBytes: 1 << 30, Duplicates: 2 * time.Minute, Replicas: 1}); err != nil {
		b.Fatal(err)
	}

	var edgeTook, rawTook time.Duration
	var edgeN, rawN int
	round := 0
	for b.Loop() {
		b.StopTimer()
		conns := claimChildren(b, home, edgeSock, fmt.Sprintf("/root/e%d", round), children, lives)
		b.StartTimer()
		phases := []func(){
			func() { edgeTook += edgePhase(b, conns); edgeN += children * lives * reportsPerRuntime },
			func() {
				rawTook += rawPhase(b, ns.URL, round, children, lives*reportsPerRuntime)
				rawN += children * lives * reportsPerRuntime
			},
		}
		phases[round%2]()
		phases[1-round%2]()
		for _, cs := range conns {
			for _, c := range cs {
				c.Close()
			}
		}
		round++
	}
	edge, raw := float64(edgeN)/edgeTook.Seconds(), float64(rawN)/rawTook.Seconds()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(edge, "reports/s-edge")
	b.ReportMetric(raw, "publishes/s-raw")
	b.ReportMetric(edge/raw, "edge/raw")
}

// claimChildren opens lives runtimes for each of children children at the
// home and says hello with each at the edge (claiming it), returning the
// connections.
func claimChildren(b *testing.B, home *servetest.Server, sock, prefix string, children, lives int) [][]net.Conn {
	conns := make([][]net.Conn, children)
	for i := range children {
		for l := range lives {
			tok, _, err := servetest.OpenRuntime(home.Host, fmt.Sprintf("%s-c%d/r%d", prefix, i, l))
			if err != nil {
				b.Fatal(err)
			}
			c, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
			if line, err := bufio.NewReader(c).ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
				b.Fatalf("hello at the edge: %q %v", line, err)
			}
			conns[i] = append(conns[i], c)
		}
	}
	return conns
}

// edgePhase has each child send its reports on each of its connections,
// each waiting for its reply, and returns how long they took.
func edgePhase(b *testing.B, conns [][]net.Conn) time.Duration {
	begin := time.Now()
	var wg sync.WaitGroup
	for i, cs := range conns {
		wg.Go(func() {
			for l, c := range cs {
				r := bufio.NewReader(c)
				for k := range reportsPerRuntime {
					fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"warning","source":"build","message":"step %d of child %d life %d: cache miss for module %d, fetched in %d ms"}}`+"\n",
						k+1, k, i, l, k*7919%1000, 10+k)
					if line, err := r.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result":{}`)) {
						b.Errorf("report at the edge: %q %v", line, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	return time.Since(begin)
}

// rawPhase runs the raw publishers in a process of their own, as the
// edge is (this one embeds the NATS server): the test binary again, with
// rawPubEnv set, which publishes and prints how long its publishing took.
func rawPhase(b *testing.B, url string, round, publishers, per int) time.Duration {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d", rawPubEnv, url, round, publishers, per))
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("raw publishers: %v: %s", err, out)
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(out)))
	if err != nil {
		b.Fatalf("raw publishers said %q", out)
	}
	return d
}

// rawPubEnv, set to "URL ROUND PUBLISHERS PER", makes the test binary the
// raw publishers of BenchmarkServeEdge (TestMain).
const rawPubEnv = "DIAGRELAY_BENCH_RAWPUB"

// rawPublishers is that process: publishers goroutines each publish per
// messages of a report's size, each with a message id, waiting for each
// PubAck; it prints how long they took.
func rawPublishers(spec string) int {
	var url string
	var round, publishers, per int
	if _, err := fmt.Sscanf(spec, "%s %d %d %d", &url, &round, &publishers, &per); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	body := bytes.Repeat([]byte("r"), 260) // about an edge's encoded report
	var failed atomic.Bool
	begin := time.Now()
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for k := range per {
				msg := &nats.Msg{Subject: "rawbench.p", Data: body}
				if _, err := js.PublishMsg(context.Background(), msg, jetstream.WithMsgID(fmt.Sprintf("r%d.p%d.%d", round, p, k)),
					jetstream.WithExpectStream("RAWBENCH")); err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 1
	}
	fmt.Println(time.Since(begin))
	return 0
}
