package service_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// 200 child connections report at once over the real socket into the real
// bbolt mailbox (loopback only, bounded in count and time).
func TestLoad200Children(t *testing.T) {
	children := 200
	if testing.Short() {
		children = 40
	}
	e := start(t, relay.ModeRPC)
	tokens := make([]string, children)
	for i := range tokens {
		tokens[i] = e.open(fmt.Sprintf("/root/c%03d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	// At most 64 connections may wait for their hello (the oldest is
	// closed to make room): children connect at most 32 at a time, as a
	// host starting 200 of them at once would see them do.
	connecting := make(chan struct{}, 32)
	for i, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			connecting <- struct{}{}
			p := e.dial(tok)
			<-connecting
			for j := range 10 {
				if ctx.Err() != nil {
					return
				}
				p.mustCall("diagnostic.report", map[string]any{"level": "info", "message": fmt.Sprintf("c%03d #%d", i, j)})
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("load did not finish in 60 s")
	}
	total := 0
	for {
		var read wire.Page
		e.host.mustCallInto("mailbox.read", map[string]any{"recipient": "/root"}, &read)
		if len(read.Messages) == 0 {
			break
		}
		ids := make([]uint64, len(read.Messages))
		for i, m := range read.Messages {
			ids[i] = m.ID
		}
		total += len(ids)
		e.host.mustCall("mailbox.ack", map[string]any{"recipient": "/root", "ids": ids})
	}
	if total != children*5 {
		t.Fatalf("%d messages, want %d (5 per child by the window)", total, children*5)
	}
}

// Shutdown finishes the requests in flight: every report that got a reply
// is in the mailbox, and later requests are refused, not lost silently.
func TestShutdownFinishesInFlight(t *testing.T) {
	e := start(t, relay.ModeRPC)
	child := e.dial(e.open("/root/x"))
	child.mustCall("diagnostic.report", map[string]any{"level": "info", "message": "before"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := e.store.Read("/root", 10)
	if err != nil || len(es) != 1 {
		t.Fatalf("after shutdown: %v %v", es, err)
	}
}

// Replies queued when Shutdown starts are written before it returns.
func TestShutdownWritesQueuedReplies(t *testing.T) {
	e := start(t, relay.ModeRPC)
	c, err := net.Dial("unix", e.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 500
	var frames []byte
	frames = fmt.Appendf(frames, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", e.open("/root/x"))
	for i := 1; i <= n; i++ {
		frames = fmt.Appendf(frames, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.probe"}`+"\n", i)
	}
	if _, err := c.Write(frames); err != nil {
		t.Fatal(err)
	}
	// Wait for the first reply, so the server is working through them.
	r := bufio.NewReader(c)
	if _, err := r.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	// The requests handled before Shutdown have their replies, in order
	// and with no gap; frames that say the server is shutting down may
	// follow; then the connection ends. They are read while Shutdown
	// runs: the socket's buffer holds fewer than 500, and the server may
	// have handled them all before Shutdown began.
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	read := make(chan error, 1)
	next := 1
	go func() {
		for {
			line, err := r.ReadBytes('\n')
			if errors.Is(err, os.ErrDeadlineExceeded) {
				read <- fmt.Errorf("the connection did not end after %d replies", next-1)
				return
			}
			if err != nil {
				read <- nil
				return
			}
			var m struct {
				ID    *int
				Error *struct{ Code int }
			}
			if json.Unmarshal(line, &m) != nil {
				read <- fmt.Errorf("bad frame %q", line)
				return
			}
			if m.Error != nil && m.Error.Code == wire.CodeShuttingDown {
				continue
			}
			if m.ID == nil || *m.ID != next {
				read <- fmt.Errorf("reply %q, want id %d", line, next)
				return
			}
			next++
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d replies written before the connection ended", next-1, n)
}

// A peer that never reads its replies cannot hold Shutdown past its
// deadline, and the manager is closed either way.
func TestShutdownWithAPeerThatDoesNotRead(t *testing.T) {
	// MaxUnsent above all the replies asked for: the peer is not
	// disconnected as slow before Shutdown; a share so large that the
	// peer is not paced before its queue is full.
	const filled = 1 << 20
	e := startConfig(t, service.Config{Mode: relay.ModeRPC, Mailbox: mailbox.NewMemory(), HelloTimeout: 2 * time.Second,
		MaxUnsent: 64 << 20, CostRate: 1 << 30, CostBurst: 1 << 30}, nil)
	c, err := net.Dial("unix", e.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tok := e.open("/root/x")
	go func() {
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
		big := []byte(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}` + "\n")
		for range 50000 { // far more replies than the queue and the socket buffer hold
			if _, err := c.Write(big); err != nil {
				return
			}
		}
	}()
	// Wait until replies the socket cannot take are queued: past any
	// kernel buffer, so the writer is stuck on the peer.
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%d bytes unsent", filled), func() bool { return e.srv.MaxUnsentNow() >= filled })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	e.srv.Shutdown(ctx)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	if _, err := e.srv.Manager().Open("/root/y", "", ""); err == nil {
		t.Fatal("manager still open after Shutdown")
	}
}

// A socket peer that never says hello is disconnected at HelloTimeout
// from accept, whatever it sends, on the injected clock; one that says
// hello in time keeps its connection past it.
func TestHelloTimeout(t *testing.T) {
	clock := simclock.New(time.Unix(1e9, 0))
	e := startConfig(t, service.Config{Mode: relay.ModeRPC, Mailbox: mailbox.NewMemory(), Now: clock.Now,
		AfterFunc: clock.AfterFunc, HelloTimeout: 2 * time.Second}, nil)
	silent := e.dial("")
	// Its first reply means the deadline is set: Serve sets it before
	// serving the connection.
	wantError(t, silent.call("diagnostic.probe", nil), wire.CodeUnauthenticated, "session.hello")
	hello := e.dial(e.open("/root/x"))
	clock.Advance(2*time.Second - time.Millisecond)
	wantError(t, silent.call("diagnostic.probe", nil), wire.CodeUnauthenticated, "session.hello")
	clock.Advance(time.Millisecond)
	waitClosed(t, silent)
	if got := e.srv.Stats().HelloTimeouts; got != 1 {
		t.Errorf("Stats.HelloTimeouts = %d, want 1", got)
	}
	clock.Advance(time.Minute)
	hello.mustCall("diagnostic.probe", nil)
}

// Two hosts opening and closing the same path at once never leave the live
// generation without a working token (run with -race).
func TestConcurrentHostsOpenTheSamePath(t *testing.T) {
	e := start(t, relay.ModeRPC)
	other := e.dial(hostToken)
	for round := range 100 {
		var wg sync.WaitGroup
		var tokA, tokB string
		wg.Add(2)
		go func() { defer wg.Done(); tokA = e.open("/root/x") }()
		go func() {
			defer wg.Done()
			tokB = other.mustCall("runtime.open", map[string]any{"path": "/root/x"})["token"].(string)
		}()
		wg.Wait()
		// Exactly one of the two tokens is live: the last generation's.
		okA := e.dial("").call("session.hello", map[string]any{"token": tokA})["error"] == nil
		okB := e.dial("").call("session.hello", map[string]any{"token": tokB})["error"] == nil
		if okA == okB {
			t.Fatalf("round %d: token A live %v, token B live %v", round, okA, okB)
		}
	}
}
