package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/cluster"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/servetest"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
)

// clusterWorkers is how many children flood the edge; each sends 5
// distinct reports a generation (all admitted: the window's share) and then
// asks the home for the next generation.
const clusterWorkers = 16

// edgeProc is `diagrelay serve --join` as a process.
type edgeProc struct {
	cmd    *exec.Cmd
	stderr *servetest.SyncBuffer
	done   chan struct{}
}

func startEdgeProc(t testing.TB, ns *natstest.Server, data, sock string) *edgeProc {
	t.Helper()
	return startEdgeWith(t, func(args ...string) *exec.Cmd { return diagrelayCmd(context.Background(), t, nil, args...) }, ns, data, sock)
}

// startEdgeWith starts the edge with command (the test binary, or the
// real one).
func startEdgeWith(t testing.TB, command servetest.Command, ns *natstest.Server, data, sock string) *edgeProc {
	t.Helper()
	return startEdgeArgs(t, command, data, sock, "--join", ns.URL, "--nats-monitor", ns.MonitorURL, "--name", "sandbox")
}

// startEdgeArgs starts `diagrelay serve --socket sock --data data flags...`
// and waits until it listens.
func startEdgeArgs(t testing.TB, command servetest.Command, data, sock string, flags ...string) *edgeProc {
	t.Helper()
	cmd := command(append([]string{"serve", "--socket", sock, "--data", data}, flags...)...)
	e := &edgeProc{cmd: cmd, stderr: &servetest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(e.done) }()
	t.Cleanup(func() { e.kill() })
	testutil.EventuallyShow(t, servetest.StartTimeout, func() bool {
		select {
		case <-e.done:
			t.Fatalf("edge exited: %s", e.stderr.String())
		default:
		}
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, func() string { return "edge not listening: " + e.stderr.String() })
	return e
}

func (e *edgeProc) kill() {
	e.cmd.Process.Kill()
	<-e.done
}

// clusterFlood is children at an edge reporting, with a record of every
// report that got a successful reply: acknowledged, so durable.
type clusterFlood struct {
	t         *testing.T
	edgeSocks []string // worker n reports through edgeSocks[n % len]

	mu     sync.Mutex
	host   *rpc.Conn // the home's stdio host; nil while the home is down
	tokens map[string]string
	acked  map[string]bool
	sent   map[string]bool
	seen   map[string]int // the home's mailbox, as drain and check read it
	nAcked atomic.Int64
	stop   atomic.Bool
}

func (f *clusterFlood) setHost(h *rpc.Conn) {
	f.mu.Lock()
	f.host = h
	f.mu.Unlock()
}

// token returns path's current token, or with fresh the next generation's,
// opened on the home; "" while the home is down.
func (f *clusterFlood) token(path string, fresh bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tok := f.tokens[path]; tok != "" && !fresh {
		return tok
	}
	if f.host == nil {
		return ""
	}
	tok, _, err := servetest.OpenRuntime(f.host, path, "parent", "/root")
	if err != nil {
		return ""
	}
	f.tokens[path] = tok
	return tok
}

func (f *clusterFlood) worker(n int, wg *sync.WaitGroup) {
	defer wg.Done()
	path := fmt.Sprintf("/root/w%d", n)
	for gen := 0; !f.stop.Load(); gen++ {
		// Always a new generation: its gate is fresh, so its 5 reports
		// are all admitted, and a {} reply (which a policy drop gets too)
		// means a report stored in the stream.
		tok := f.token(path, true)
		if tok == "" {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		c, err := servetest.DialSocket(f.edgeSocks[n%len(f.edgeSocks)], tok)
		if err != nil { // the edge is down, or the token was just revoked
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for i := range 5 {
			msg := fmt.Sprintf("w%d g%d r%d %d", n, gen, i, time.Now().UnixNano())
			f.mu.Lock()
			f.sent[msg] = true
			f.mu.Unlock()
			p := map[string]string{"level": "warning", "message": msg}
			if err := c.Call(wire.MethodDiagnosticReport, p, nil); err != nil {
				break
			}
			f.mu.Lock()
			f.acked[msg] = true
			f.mu.Unlock()
			f.nAcked.Add(1)
		}
		c.Close()
	}
}

// spare sends one generation's 5 reports with a token opened earlier.
func (f *clusterFlood) spare(n int, tok string, wg *sync.WaitGroup) {
	defer wg.Done()
	c, err := servetest.DialSocket(f.edgeSocks[0], tok)
	if err != nil {
		f.t.Errorf("spare %d: %v", n, err)
		return
	}
	defer c.Close()
	for i := range 5 {
		msg := fmt.Sprintf("s%d r%d %d", n, i, time.Now().UnixNano())
		f.mu.Lock()
		f.sent[msg] = true
		f.mu.Unlock()
		if err := c.Call(wire.MethodDiagnosticReport, map[string]string{"level": "error", "message": msg}, nil); err != nil {
			return
		}
		f.mu.Lock()
		f.acked[msg] = true
		f.mu.Unlock()
		f.nAcked.Add(1)
	}
}

// waitAcked waits until n more reports were acknowledged.
func (f *clusterFlood) waitAcked(t *testing.T, n int64, what string) {
	t.Helper()
	want := f.nAcked.Load() + n
	testutil.Eventually(t, 30*time.Second, fmt.Sprintf("%s: %d acknowledged reports", what, want), func() bool { return f.nAcked.Load() >= want })
}

// TestClusterKill9: children flood admitted reports through an edge while
// the edge is killed with SIGKILL and restarted, then the home, then the
// NATS server is restarted; afterwards every report an edge acknowledged
// is in the home's mailbox exactly once, and nothing is there twice.
func TestClusterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of processes")
	}
	ns := natstest.Start(t)
	dir := shortTempDir(t)
	homeData, homeSock := filepath.Join(dir, "home"), filepath.Join(dir, "h.sock")
	edgeData, edgeSock := filepath.Join(dir, "edge"), filepath.Join(dir, "e.sock")
	homeFlags := []string{"--cluster", ns.URL, "--nats-monitor", ns.MonitorURL}

	home := startServer(t, homeData, homeSock, homeFlags...)
	edge := startEdgeProc(t, ns, edgeData, edgeSock)
	f := &clusterFlood{t: t, edgeSocks: []string{edgeSock}, host: home.host.Conn,
		tokens: map[string]string{}, acked: map[string]bool{}, sent: map[string]bool{}, seen: map[string]int{}}
	var wg sync.WaitGroup
	for n := range clusterWorkers {
		wg.Add(1)
		go f.worker(n, &wg)
	}

	f.waitAcked(t, 150, "before killing the edge")
	t.Logf("killing the edge at %d", time.Now().UnixNano())
	edge.kill()
	edge = startEdgeProc(t, ns, edgeData, edgeSock) // the same edge: its name is in its data
	f.waitAcked(t, 150, "after the edge restarted")

	// Children opened before the home dies report while it is down: the
	// stream holds their reports until it is back.
	spares := make([]string, clusterWorkers)
	for n := range spares {
		spares[n] = f.token(fmt.Sprintf("/root/s%d", n), true)
	}
	f.setHost(nil)
	t.Logf("killing the home at %d", time.Now().UnixNano())
	home.kill()
	home.wait()
	for n, tok := range spares {
		wg.Add(1)
		go f.spare(n, tok, &wg)
	}
	f.waitAcked(t, 40, "while the home was down")
	home = startServer(t, homeData, homeSock, homeFlags...)
	f.setHost(home.host.Conn)
	f.waitAcked(t, 150, "after the home restarted")

	t.Logf("restarting NATS at %d", time.Now().UnixNano())
	ns.Restart()
	t.Logf("restarted NATS at %d", time.Now().UnixNano())
	f.waitAcked(t, 150, "after the NATS server restarted")

	f.stop.Store(true)
	wg.Wait()
	f.drain(t, home, func() { logConsumer(t, ns) })
	edge.kill()
	if missing, twice, unknown := f.check(t, homeData); missing > 0 || twice > 0 || unknown > 0 {
		t.Fatalf("%d acknowledged reports missing, %d stored twice, %d never sent", missing, twice, unknown)
	}
}

// drain moves /root's messages out of the home's mailbox through its host
// (read, then acknowledged) into f.seen until every acknowledged report has
// come (or a minute has passed), calls before (the failure's story), and
// kills the home; check then reads what is left in the file.
func (f *clusterFlood) drain(t *testing.T, home *server, before func()) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for f.unseen() > 0 && time.Now().Before(deadline) {
		var page wire.Page
		err := home.host.Call(wire.MethodMailboxRead, map[string]any{"recipient": "/root", "limit": mailbox.MaxReadLimit}, &page)
		if err != nil || len(page.Messages) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		ids := make([]uint64, len(page.Messages))
		for i, m := range page.Messages {
			f.seen[m.Message]++
			ids[i] = m.ID
		}
		if err := home.host.Call(wire.MethodMailboxAck, map[string]any{"recipient": "/root", "ids": ids}, nil); err != nil {
			t.Fatalf("mailbox.ack: %v", err)
		}
	}
	before()
	home.kill()
	home.wait()
}

// unseen counts the acknowledged reports drain has not seen yet.
func (f *clusterFlood) unseen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for m := range f.acked {
		if f.seen[m] == 0 {
			n++
		}
	}
	return n
}

// check reads what is left of the stopped home's mailbox file into f.seen
// and compares it with what the children sent: acknowledged reports
// missing, reports stored twice, and reports stored that were never sent.
func (f *clusterFlood) check(t *testing.T, homeData string) (missing, twice, unknown int) {
	t.Helper()
	st, err := mailbox.Open(filepath.Join(homeData, datadir.MailboxFile), mailbox.WithLockTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen := f.seen
	for {
		es, err := st.Read("/root", mailbox.MaxReadLimit)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			break
		}
		ids := make([]uint64, len(es))
		for i, e := range es {
			seen[e.Message]++
			ids[i] = e.ID
		}
		if _, err := st.Ack("/root", ids); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for m := range f.acked {
		if seen[m] == 0 {
			if missing < 10 {
				t.Logf("missing: %s", m)
			}
			missing++
		}
	}
	for m, n := range seen {
		if n > 1 {
			twice++
		}
		if !f.sent[m] {
			unknown++
		}
	}
	t.Logf("%d acknowledged, %d in the mailbox (%d sent without a reply)", len(f.acked), len(seen), len(f.sent)-len(f.acked))
	return missing, twice, unknown
}

// logConsumer logs the home's consumer state, for a failure's story.
func logConsumer(t *testing.T, ns *natstest.Server) {
	nc, err := nats.Connect(ns.URL)
	if err != nil {
		t.Log(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	c, err := js.Consumer(t.Context(), cluster.StreamName, cluster.ConsumerName)
	if err != nil {
		t.Log(err)
		return
	}
	ci, err := c.Info(t.Context())
	if err != nil {
		t.Log(err)
		return
	}
	t.Logf("consumer: pending %d, ack pending %d, redelivered %d, delivered %+v, ack floor %+v", ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.Delivered, ci.AckFloor)
}

// TestBinaryHasNoBroker: the NATS server module is for the tests alone
// (docs/cluster.md), so the binary does not grow by a broker.
func TestBinaryHasNoBroker(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/nats-io/nats-server") {
			t.Fatalf("diagrelay imports %s", dep)
		}
	}
	if !strings.Contains(string(out), "github.com/nats-io/nats.go/jetstream") {
		t.Fatal("diagrelay does not import the NATS client: the list is not what this test thinks")
	}
}

// TestClusterRefusesLazyFsync: serve --cluster and --join refuse a
// JetStream that may acknowledge before the disk has the write, naming
// the flag that allows it.
func TestClusterRefusesLazyFsync(t *testing.T) {
	ns := natstest.StartWith(t, &natstest.Server{Dir: t.TempDir(), LazyFsync: true})
	dir := shortTempDir(t)
	r := runDiagrelay(t, nil, "", "serve", "--cluster", ns.URL, "--nats-monitor", ns.MonitorURL,
		"--data", filepath.Join(dir, "h"), "--socket", filepath.Join(dir, "h.sock"))
	wantExit(t, "serve --cluster on a lazy JetStream", r, 1, "--allow-lazy-fsync")
	r = runDiagrelay(t, nil, "", "serve", "--join", ns.URL, "--data", filepath.Join(dir, "e"), "--socket", filepath.Join(dir, "e.sock"))
	wantExit(t, "serve --join without --nats-monitor", r, 1, "--nats-monitor")
}
