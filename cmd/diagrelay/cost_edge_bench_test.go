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
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/servetest"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// BenchmarkServeEdge is the fifth goal of docs/performance.md, "The cost of
// a report": an edge (the real binary as
// `serve --join`, beside a home, `serve --cluster`) publishing its 8
// children's admitted reports, each child waiting for each reply (so for
// its PubAck), against 8 raw nats.go publishers that each publish a
// message of the same size with a message id and wait for its PubAck, to
// a stream of the same configuration on the same synced JetStream
// (embedded, sync always), in alternating phases. The raw publishers run
// in a process of their own, as the edge does. Each phase starts once the
// home has consumed every report of the one before, so no phase pays for
// another's. It reports reports/s of each, edge/raw, and the CPU per
// report of the edge, of the home and of this process (the NATS server
// and the children) in each kind of phase.
//
// The variants: claims=before opens and claims (says hello with) every
// runtime before the phase, as a child that has said hello once reports
// from then on; claims=inside times each runtime's hello at the edge (its
// claim, one compare-and-set on the bucket) with its reports (the open at
// the home stays outside); home=paused stops the home (SIGSTOP) during the
// edge's phases, as a home on another machine would take its consuming
// off these 2 cores, and lets it drain before the next phase;
// raw=consumed gives the raw stream a consumer as the home is to the
// cluster's (a durable pull consumer, explicit acks, 64 pulled ahead, each
// message acknowledged), a process of its own consuming during the raw
// phases (not all: those it has not consumed when the phase ends it
// consumes before the next), so that the server does for raw publishes
// what it does for the edge's: store, deliver, take the acks.
//
//	go test -run '^$' -bench ServeEdge -benchtime 3x ./cmd/diagrelay/
func BenchmarkServeEdge(b *testing.B) {
	for _, v := range []struct {
		name                                 string
		claimsInside, pauseHome, rawConsumed bool
	}{
		{"claims=before", false, false, false},
		{"claims=inside", true, false, false},
		{"claims=before/home=paused", false, true, false},
		{"claims=before/raw=consumed", false, false, true},
	} {
		b.Run(v.name, func(b *testing.B) { benchServeEdge(b, v.claimsInside, v.pauseHome, v.rawConsumed) })
	}
}

func benchServeEdge(b *testing.B, claimsInside, pauseHome, rawConsumed bool) {
	const children, lives = 8, 20 // a phase: 8 x 20 x 5 = 800 reports
	ns := natstest.Start(b)
	dir := shortTempDir(b)
	home := startReal(b, filepath.Join(dir, "home"), "--cluster", ns.URL, "--nats-monitor", ns.MonitorURL)
	bin := costBinary(b)
	edgeSock := filepath.Join(dir, "e.sock")
	edge := startEdgeWith(b, func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }, ns, filepath.Join(dir, "edge"), edgeSock)

	js := ns.JetStream(b)
	// As cluster/config.go makes the cluster's stream.
	if _, err := js.CreateOrUpdateStream(context.Background(), jetstream.StreamConfig{Name: "RAWBENCH", Subjects: []string{"rawbench.*"},
		Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardNew,
		MaxBytes: 1 << 30, Duplicates: 2 * time.Minute, Replicas: 1}); err != nil {
		b.Fatal(err)
	}
	consumer, err := js.Consumer(context.Background(), "DIAGRELAY", "home")
	if err != nil {
		b.Fatal(err)
	}
	consumers := []jetstream.Consumer{consumer}
	rawConsumerPid := 0
	if rawConsumed {
		var c jetstream.Consumer
		c, rawConsumerPid = startRawConsumer(b, js, ns.URL)
		consumers = append(consumers, c)
	}
	// drained waits until the home (and the raw consumer) consumed and
	// acknowledged every message.
	drained := func() {
		testutil.Eventually(b, 60*time.Second, "the home consumes the edge's reports", func() bool {
			for _, c := range consumers {
				ci, err := c.Info(context.Background())
				if err != nil || ci.NumPending != 0 || ci.NumAckPending != 0 {
					return false
				}
			}
			return true
		})
	}

	self, edgePid, homePid := os.Getpid(), edge.cmd.Process.Pid, home.Cmd.Process.Pid
	var edgeTook, rawTook, edgeCPU, homeCPU, selfEdgeCPU, selfRawCPU, rawCPU, rawConsumerCPU time.Duration
	var edgeN, rawN int
	round := 0
	for b.Loop() {
		b.StopTimer()
		prefix := fmt.Sprintf("/root/e%d", round)
		var conns [][]net.Conn
		var tokens [][]string
		if claimsInside {
			tokens = openRuntimes(b, home, prefix, children, lives)
		} else {
			conns = claimChildren(b, home, edgeSock, prefix, children, lives)
		}
		b.StartTimer()
		phases := []func(){
			func() {
				drained()
				if pauseHome {
					home.Cmd.Process.Signal(syscall.SIGSTOP)
				}
				e0, h0, s0 := cpuTime(b, edgePid), cpuTime(b, homePid), cpuTime(b, self)
				if claimsInside {
					var took time.Duration
					took, conns = helloAndReport(b, edgeSock, tokens)
					edgeTook += took
				} else {
					edgeTook += edgePhase(b, conns)
				}
				edgeCPU += cpuTime(b, edgePid) - e0
				homeCPU += cpuTime(b, homePid) - h0
				selfEdgeCPU += cpuTime(b, self) - s0
				if pauseHome {
					home.Cmd.Process.Signal(syscall.SIGCONT)
				}
				edgeN += children * lives * reportsPerRuntime
			},
			func() {
				drained()
				s0 := cpuTime(b, self)
				var c0 time.Duration
				if rawConsumed {
					c0 = cpuTime(b, rawConsumerPid)
				}
				took, cpu := rawPhase(b, ns.URL, round, children, lives*reportsPerRuntime)
				rawTook += took
				rawCPU += cpu
				selfRawCPU += cpuTime(b, self) - s0
				if rawConsumed {
					rawConsumerCPU += cpuTime(b, rawConsumerPid) - c0
				}
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
	edgeRate, raw := float64(edgeN)/edgeTook.Seconds(), float64(rawN)/rawTook.Seconds()
	us := func(d time.Duration, n int) float64 { return float64(d) / 1e3 / float64(n) }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(edgeRate, "reports/s-edge")
	b.ReportMetric(raw, "publishes/s-raw")
	b.ReportMetric(edgeRate/raw, "edge/raw")
	b.ReportMetric(us(edgeCPU, edgeN), "µs-cpu-edge/report")
	b.ReportMetric(us(homeCPU, edgeN), "µs-cpu-home/report")
	b.ReportMetric(us(selfEdgeCPU, edgeN), "µs-cpu-nats+children/report")
	b.ReportMetric(us(selfRawCPU, rawN), "µs-cpu-nats/raw")
	b.ReportMetric(us(rawCPU, rawN), "µs-cpu-publishers/raw")
	if rawConsumed {
		b.ReportMetric(us(rawConsumerCPU, rawN), "µs-cpu-consumer/raw")
	}
}

// openRuntimes opens lives runtimes for each of children children at the
// home and returns their tokens.
func openRuntimes(b *testing.B, home *servetest.Server, prefix string, children, lives int) [][]string {
	tokens := make([][]string, children)
	for i := range children {
		for l := range lives {
			tok, _, err := servetest.OpenRuntime(home.Host, fmt.Sprintf("%s-c%d/r%d", prefix, i, l))
			if err != nil {
				b.Fatal(err)
			}
			tokens[i] = append(tokens[i], tok)
		}
	}
	return tokens
}

// helloAndReport has each child, for each of its tokens in turn, connect
// to the edge, say hello (the edge claims the token) and send its reports,
// each waiting for its reply; it returns how long they took and the
// connections.
func helloAndReport(b *testing.B, sock string, tokens [][]string) (time.Duration, [][]net.Conn) {
	conns := make([][]net.Conn, len(tokens))
	begin := time.Now()
	var wg sync.WaitGroup
	for i, ts := range tokens {
		wg.Go(func() {
			for l, tok := range ts {
				c, err := net.Dial("unix", sock)
				if err != nil {
					b.Error(err)
					return
				}
				conns[i] = append(conns[i], c)
				r := bufio.NewReader(c)
				if !hello(b, c, r, tok) || !report(b, c, r, i, l) {
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(begin), conns
}

// claimChildren opens lives runtimes for each of children children at the
// home and says hello with each at the edge (claiming it), returning the
// connections.
func claimChildren(b *testing.B, home *servetest.Server, sock, prefix string, children, lives int) [][]net.Conn {
	conns := make([][]net.Conn, children)
	for i, ts := range openRuntimes(b, home, prefix, children, lives) {
		for _, tok := range ts {
			c, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			conns[i] = append(conns[i], c)
			if !hello(b, c, bufio.NewReader(c), tok) {
				b.FailNow()
			}
		}
	}
	return conns
}

func hello(b *testing.B, c net.Conn, r *bufio.Reader, tok string) bool {
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
	if line, err := r.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		b.Errorf("hello at the edge: %q %v", line, err)
		return false
	}
	return true
}

// edgePhase has each child send its reports on each of its connections,
// each waiting for its reply, and returns how long they took.
func edgePhase(b *testing.B, conns [][]net.Conn) time.Duration {
	begin := time.Now()
	var wg sync.WaitGroup
	for i, cs := range conns {
		wg.Go(func() {
			for l, c := range cs {
				if !report(b, c, bufio.NewReader(c), i, l) {
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(begin)
}

// report sends life l of child i its reports, each waiting for its reply.
func report(b *testing.B, c net.Conn, r *bufio.Reader, i, l int) bool {
	for k := range reportsPerRuntime {
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"warning","source":"build","message":"step %d of child %d life %d: cache miss for module %d, fetched in %d ms"}}`+"\n",
			k+1, k, i, l, k*7919%1000, 10+k)
		if line, err := r.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result":{}`)) {
			b.Errorf("report at the edge: %q %v", line, err)
			return false
		}
	}
	return true
}

// rawPhase runs the raw publishers in a process of their own, as the
// edge is (this one embeds the NATS server): the test binary again, with
// rawPubEnv set, which publishes and prints how long its publishing took.
// It returns that and the process's CPU time.
func rawPhase(b *testing.B, url string, round, publishers, per int) (time.Duration, time.Duration) {
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
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// rawConsumerEnv, set to a NATS URL, makes the test binary the raw
// stream's consumer (TestMain): it acknowledges every message of RAWBENCH
// until killed.
const rawConsumerEnv = "DIAGRELAY_BENCH_RAWCONSUMER"

// startRawConsumer makes RAWBENCH's consumer, as cluster/home.go makes
// the home's, and starts the process that consumes it.
func startRawConsumer(b *testing.B, js jetstream.JetStream, url string) (jetstream.Consumer, int) {
	c, err := js.CreateOrUpdateConsumer(context.Background(), "RAWBENCH", jetstream.ConsumerConfig{
		Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 5 * time.Second, MaxAckPending: 1024})
	if err != nil {
		b.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), rawConsumerEnv+"="+url)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c, cmd.Process.Pid
}

// rawJetStream connects a raw process (publishers, consumer) to url.
func rawJetStream(url string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// rawConsumer is that process.
func rawConsumer(url string) int {
	nc, js, err := rawJetStream(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	c, err := js.Consumer(context.Background(), "RAWBENCH", "raw")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := c.Consume(func(m jetstream.Msg) { m.Ack() }, jetstream.PullMaxMessages(64)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
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
	nc, js, err := rawJetStream(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
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
