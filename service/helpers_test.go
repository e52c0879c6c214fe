package service_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

const hostToken = "host-secret-for-tests"

// env is a real server: a bbolt mailbox in a temp dir, a Unix socket, and
// the host on an in-process pipe as it would be on stdio.
type env struct {
	t      testing.TB
	srv    *service.Server
	store  *mailbox.Store
	socket string
	host   *peer
	done   chan struct{}
}

func start(t testing.TB, mode relay.Mode) *env {
	t.Helper()
	store, err := mailbox.Open(filepath.Join(t.TempDir(), "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	return startWith(t, mode, store, nil)
}

// startWith serves store with the clock now (nil: the wall clock).
func startWith(t testing.TB, mode relay.Mode, store *mailbox.Store, now func() time.Time) *env {
	t.Helper()
	return startConfig(t, service.Config{Mode: mode, Mailbox: store, Now: now, HelloTimeout: 2 * time.Second}, store)
}

// startConfig serves c on a real Unix socket and a host pipe; the host
// token and a loose toast limit are filled in. store, if not nil, is closed
// at the end.
func startConfig(t testing.TB, c service.Config, store *mailbox.Store) *env {
	t.Helper()
	c.HostToken = hostToken
	if c.NotifyRate == 0 {
		c.NotifyRate, c.NotifyBurst = 1000, 1000
	}
	srv := service.New(c)
	// A short socket path: sun_path holds about 100 bytes.
	sockDir, err := shortTempDir(t)
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(sockDir, "s")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, store: store, socket: socket, done: make(chan struct{})}
	go srv.Serve(l)

	hostIn, toServer := io.Pipe()
	fromServer, hostOut := io.Pipe()
	go func() {
		srv.ServeHost(hostIn, hostOut)
		hostOut.Close()
		close(e.done)
	}()
	e.host = newPeer(t, toServer, fromServer, toServer)
	t.Cleanup(func() {
		toServer.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if store != nil {
			store.Close()
		}
	})
	return e
}

// dial connects a socket peer; token "" skips the hello.
func (e *env) dial(token string) *peer {
	e.t.Helper()
	c, err := net.Dial("unix", e.socket)
	if err != nil {
		e.t.Fatal(err)
	}
	p := newPeer(e.t, c, c, c)
	e.t.Cleanup(func() { c.Close() })
	if token != "" {
		p.mustCall("session.hello", map[string]any{"token": token})
	}
	return p
}

// open opens a child runtime through the host and returns its token.
func (e *env) open(path string) string {
	e.t.Helper()
	var res wire.OpenResult
	e.host.mustCallInto(wire.MethodRuntimeOpen, wire.OpenParams{Path: path}, &res)
	if len(res.Token) != 64 || res.Generation < 1 {
		e.t.Fatalf("runtime.open gave %+v", res)
	}
	return res.Token
}

// peer speaks line-delimited JSON-RPC. A goroutine reads every frame the
// server sends, as a real client must (the server drops notifications for a
// peer that does not read); replies and notifications are kept apart.
type peer struct {
	t       testing.TB
	w       io.Writer
	closer  io.Closer
	id      int
	replies chan map[string]any

	mu            sync.Mutex
	notifications []map[string]any
}

func newPeer(t testing.TB, w io.Writer, r io.Reader, c io.Closer) *peer {
	p := &peer{t: t, w: w, closer: c, replies: make(chan map[string]any, 1024)}
	go func() {
		defer close(p.replies)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				m = map[string]any{"id": "unparsable", "raw": string(line)}
			}
			if _, ok := m["id"]; !ok {
				p.mu.Lock()
				p.notifications = append(p.notifications, m)
				p.mu.Unlock()
				continue
			}
			p.replies <- m
		}
	}()
	return p
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// reply waits for the next reply frame.
func (p *peer) reply() map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.replies:
		if !ok {
			p.t.Fatal("connection closed while waiting for a reply")
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("no reply within 10 s")
	}
	return nil
}

func (p *peer) call(method string, params any) map[string]any {
	p.t.Helper()
	p.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method, "params": params})
	p.send(string(b))
	m := p.reply()
	if id, _ := m["id"].(float64); int(id) != p.id {
		p.t.Fatalf("reply id %v, want %d: %v", m["id"], p.id, m)
	}
	return m
}

func (p *peer) mustCall(method string, params any) map[string]any {
	p.t.Helper()
	m := p.call(method, params)
	if m["error"] != nil {
		p.t.Fatalf("%s: %v", method, m["error"])
	}
	return m["result"].(map[string]any)
}

func (p *peer) mustCallInto(method string, params any, v any) {
	p.t.Helper()
	b, _ := json.Marshal(p.mustCall(method, params))
	if err := json.Unmarshal(b, v); err != nil {
		p.t.Fatal(err)
	}
}

// wantError checks a reply's error code and that its message contains want.
func wantError(t testing.TB, m map[string]any, code int, want string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("want error %d, got %v", code, m)
	}
	if int(e["code"].(float64)) != code || !strings.Contains(e["message"].(string), want) {
		t.Fatalf("error = %v, want code %d containing %q", e, code, want)
	}
}

// takeNotifications returns the notifications received so far, after
// waiting (up to 10 s: the test fails otherwise) for at least want of them.
func (p *peer) takeNotifications(want int) []map[string]any {
	p.t.Helper()
	count := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.notifications)
	}
	testutil.EventuallyShow(p.t, 10*time.Second, func() bool { return count() >= want }, func() string {
		return fmt.Sprintf("%d notifications, want %d", count(), want)
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.notifications
	p.notifications = nil
	return out
}

// shortTempDir makes a temp dir with a short path, since a Unix socket path
// must fit in about 100 bytes and t.TempDir can be long.
func shortTempDir(t testing.TB) (string, error) {
	d, err := os.MkdirTemp("", "dr")
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d, nil
}

// waitClosed waits for the server to close p's connection: every reply
// channel read ends.
func waitClosed(t testing.TB, p *peer) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-p.replies:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("connection still open after 10 s")
		}
	}
}
