package cluster

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// testHome is a home's whole serve in-process: the mailbox file, the
// Home, its server on a real Unix socket, and a host connected to it.
type testHome struct {
	h     *Home
	srv   *service.Server
	store *mailbox.Store
	sock  string
	token string // the host token
	host  *client.Host
}

func startHome(t testing.TB, ns *natstest.Server, tune ...func(*service.Config)) *testHome {
	t.Helper()
	dir := testutil.ShortTempDir(t)
	store, err := mailbox.Open(filepath.Join(dir, "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHome(context.Background(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Logger: testLogger(t)})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	h.PruneEvery = 200 * time.Millisecond
	tok := service.NewToken()
	cfg := service.Config{Mailbox: store, HostToken: tok, Directory: h, Mode: relay.ModeRPC}
	for _, f := range tune {
		f(&cfg)
	}
	srv := service.New(cfg)
	if err := h.Start(srv.Manager(), store); err != nil {
		t.Fatal(err)
	}
	th := &testHome{h: h, srv: srv, store: store, sock: filepath.Join(dir, "home.sock"), token: tok}
	serveOn(t, srv, th.sock)
	if th.host, err = client.DialHost(th.sock, tok); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		th.host.Close()
		shutdown(srv)
		h.Close()
		store.Close()
	})
	return th
}

// testEdge is an edge's serve in-process.
type testEdge struct {
	e    *Edge
	srv  *service.Server
	sock string
}

func startEdge(t testing.TB, ns *natstest.Server, name string) *testEdge {
	t.Helper()
	dir := testutil.ShortTempDir(t)
	e, err := NewEdge(context.Background(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Name: name, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e.CountsEvery = 100 * time.Millisecond
	srv := service.New(service.Config{Mailbox: e.Mailbox(), Directory: e, Edge: true, Mode: relay.ModePrint})
	if err := e.Start(srv); err != nil {
		t.Fatal(err)
	}
	te := &testEdge{e: e, srv: srv, sock: filepath.Join(dir, "edge.sock")}
	serveOn(t, srv, te.sock)
	t.Cleanup(func() {
		shutdown(srv)
		e.Close()
	})
	return te
}

func serveOn(t testing.TB, srv *service.Server, sock string) {
	t.Helper()
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
}

func shutdown(srv *service.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}

// rawChild is a child connection that sends its text as it is, unlike
// client.Child, which cleans it first: what a hostile child does.
type rawChild struct{ c *rpc.Conn }

func dialRaw(t testing.TB, sock, token string) (*rawChild, error) {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawChild{rpc.New(nc, nc, nc, rpc.Options{Timeout: 10 * time.Second})}
	if err := c.c.Call(wire.MethodHello, wire.HelloParams{Token: token}, nil); err != nil {
		c.c.Close()
		return nil, err
	}
	t.Cleanup(func() { c.c.Close() })
	return c, nil
}

func (c *rawChild) report(level, message, source string) error {
	p := wire.ReportParams{Level: &level, Message: &message}
	if source != "" {
		p.Source = &source
	}
	return c.c.Call(wire.MethodDiagnosticReport, p, nil)
}

// code is the JSON-RPC error code of err, or 0.
func code(err error) int {
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	if _, bench := t.(*testing.B); bench {
		return nil // a benchmark's log would be its output
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}
