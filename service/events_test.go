package service_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/service"
)

// startSocketOnly is a real server on a Unix socket with a bbolt mailbox,
// configured by cfg (Mailbox and HostToken are filled in); the host is a
// socket peer.
func startSocketOnly(t *testing.T, cfg service.Config) *env {
	t.Helper()
	store, err := mailbox.Open(filepath.Join(t.TempDir(), "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mailbox, cfg.HostToken = store, hostToken
	srv := service.New(cfg)
	dir, err := shortTempDir(t)
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "s")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	e := &env{t: t, srv: srv, store: store, socket: socket}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		store.Close()
	})
	e.host = e.dial(hostToken)
	return e
}

// events returns the event notifications among ns, params only.
func events(ns []map[string]any) []map[string]any {
	var out []map[string]any
	for _, n := range ns {
		if n["method"] == "event" {
			out = append(out, n["params"].(map[string]any))
		}
	}
	return out
}

// waitEvents waits up to 5 s for n event notifications on p.
func waitEvents(t *testing.T, p *peer, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	testutil.Eventually(t, 5*time.Second, fmt.Sprintf("%d events", n), func() bool {
		got = append(got, events(p.takeNotifications(0))...)
		return len(got) >= n
	})
	return got
}

func TestEventsOfOneSession(t *testing.T) {
	e := startSocketOnly(t, service.Config{NotifyRate: rate.Inf})
	watcher := e.dial(hostToken)
	if r := watcher.mustCall("events.subscribe", map[string]any{}); len(r) != 0 {
		t.Fatalf("events.subscribe = %v, want {}", r)
	}
	child := e.dial(e.open("/root/scout"))
	e.host.mustCall("runtime.open", map[string]any{"path": "/k", "owner": "/root"})
	hostile := "\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \u202eevil"
	child.mustCall("diagnostic.report", map[string]any{"level": "error", "source": "li\x1b[31mnt", "message": hostile})
	child.mustCall("diagnostic.report", map[string]any{"level": "error", "source": "lint", "message": hostile})
	e.host.mustCall("runtime.close", map[string]any{"path": "/root/scout"})
	e.open("/root/scout")

	got := waitEvents(t, watcher, 7)
	kinds := []string{"opened", "opened", "delivered", "notified", "dropped", "closed", "reopened"}
	for i, k := range kinds {
		if got[i]["kind"] != k {
			t.Fatalf("event %d is %v, want kind %s; all: %v", i, got[i], k, got)
		}
		if _, err := time.Parse(time.RFC3339Nano, got[i]["at"].(string)); err != nil {
			t.Fatalf("event %d: at: %v", i, err)
		}
	}
	if ev := got[1]; ev["thread"] != "/k" || ev["owner"] != "/root" || ev["parent"] != "" || ev["generation"] != float64(1) {
		t.Fatalf("opened /k = %v", ev)
	}
	if ev := got[2]; ev["thread"] != "/root/scout" || ev["level"] != "error" || ev["source"] != "lint" || ev["message"] != "link evil" {
		t.Fatalf("delivered = %v", ev)
	}
	if ev := got[3]; ev["thread"] != "/root/scout" || ev["notifyType"] != "error" || ev["message"] != "/root/scout [lint]: link evil" {
		t.Fatalf("notified = %v", ev)
	}
	if ev := got[4]; ev["reason"] != "duplicate" {
		t.Fatalf("dropped = %v", ev)
	}
	if ev := got[6]; ev["generation"] != float64(2) || ev["parent"] != "/root" {
		t.Fatalf("reopened = %v", ev)
	}
	if extra := events(e.host.takeNotifications(0)); len(extra) != 0 {
		t.Fatalf("a host that did not subscribe got events: %v", extra)
	}

	var list wire.Threads
	watcher.mustCallInto("thread.list", map[string]any{}, &list)
	if len(list.Threads) != 2 {
		t.Fatalf("thread.list = %+v", list)
	}
	k, s := list.Threads[0], list.Threads[1]
	if k.Path != "/k" || k.Owner != "/root" || !k.Open || k.Generation != 1 || k.Diagnostics != 0 {
		t.Fatalf("thread.list[0] = %+v", k)
	}
	if s.Path != "/root/scout" || s.Parent != "/root" || !s.Open || s.Generation != 2 || s.Diagnostics != 1 || s.Dropped.Duplicate != 1 {
		t.Fatalf("thread.list[1] = %+v", s)
	}
}

func TestEventsAreHostOnly(t *testing.T) {
	e := startSocketOnly(t, service.Config{})
	child := e.dial(e.open("/root/x"))
	for _, m := range []string{"thread.list", "events.subscribe"} {
		wantError(t, child.call(m, nil), wire.CodeForbidden, "host method")
		wantError(t, e.dial("").call(m, nil), wire.CodeUnauthenticated, "session.hello")
	}
	wantError(t, e.host.call("thread.list", []int{1}), wire.CodeInvalidParams, "object")
}

// TestHeldAndSummary: with a limit of one notification, the second and
// third reports are held, and the summary (thread "") counts them.
func TestHeldAndSummary(t *testing.T) {
	e := startSocketOnly(t, service.Config{NotifyRate: 2, NotifyBurst: 1})
	e.host.mustCall("events.subscribe", nil)
	for i := range 3 {
		c := e.dial(e.open(fmt.Sprintf("/root/c%d", i)))
		c.mustCall("diagnostic.report", map[string]any{"level": "warning", "message": "m"})
	}
	got := waitEvents(t, e.host, 3+3+3+1)
	var held, notified []map[string]any
	for _, ev := range got {
		switch ev["kind"] {
		case "held":
			held = append(held, ev)
		case "notified":
			notified = append(notified, ev)
		}
	}
	if len(held) != 2 || held[0]["thread"] != "/root/c1" || held[1]["message"] != "/root/c2: m" {
		t.Fatalf("held = %v", held)
	}
	if len(notified) != 2 || notified[1]["thread"] != "" || notified[1]["notifyType"] != "warning" {
		t.Fatalf("notified = %v", notified)
	}
}

// TestSubscriberThatDoesNotRead: a host that subscribes and stops reading
// does not slow the children, loses events, and when it reads again is
// told how many, so that what it got plus what it lost is every event.
func TestSubscriberThatDoesNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the server")
	}
	// The children's share is unbounded here: the test is about the
	// subscriber's queue, and at the default share 20,000 reports take
	// minutes (cost.go).
	e := startSocketOnly(t, service.Config{NotifyRate: rate.Inf, CostRate: 1 << 30, CostBurst: 1 << 30})
	nc, err := net.Dial("unix", e.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	for i, m := range []string{"session.hello", "events.subscribe"} {
		params := map[string]any{}
		if i == 0 {
			params["token"] = hostToken
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": m, "params": params})
		nc.Write(append(b, '\n'))
		if _, err := br.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// From here on nobody reads nc until the children are done.
	const children, perChild = 8, 2500
	var wg sync.WaitGroup
	start := time.Now()
	for i := range children {
		c := e.dial(e.open(fmt.Sprintf("/root/f%d", i)))
		wg.Go(func() {
			for j := range perChild {
				c.mustCall("diagnostic.report", map[string]any{"level": "info", "message": fmt.Sprint("flood ", j)})
			}
		})
	}
	wg.Wait()
	t.Logf("%d reports in %v with a subscriber not reading", children*perChild, time.Since(start))
	// With the host's queue full of events, notifications still find room.
	const late = 8
	for i := range late {
		e.dial(e.open(fmt.Sprintf("/root/late%d", i))).mustCall("diagnostic.report", map[string]any{"level": "info", "message": "late"})
	}

	// A flood may outlast the 10 s window, when 5 more get through: count
	// what was delivered.
	var list wire.Threads
	e.host.mustCallInto(wire.MethodThreadList, nil, &list)
	delivered := 0
	for _, th := range list.Threads {
		if strings.HasPrefix(th.Path, "/root/f") {
			delivered += th.Diagnostics
		}
	}
	if delivered < children*diagPerWindow {
		t.Fatalf("%d delivered, want at least %d", delivered, children*diagPerWindow)
	}

	var received, lost, notes int
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	// opened, delivered or dropped, notified (NotifyRate is Inf)
	want := children + children*perChild + delivered + 3*late
	for received+lost < want {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d events and %d lost of %d: %v", received, lost, want, err)
		}
		var n struct {
			Method string
			Params wire.Event
		}
		if err := json.Unmarshal(line, &n); err != nil {
			t.Fatalf("frame %q: %v", line, err)
		}
		if n.Method == wire.NotifyUI {
			notes++ // this host gets those too, and events never crowd them out
			continue
		}
		if n.Method != wire.NotifyEvent {
			t.Fatalf("frame %q", line)
		}
		if n.Params.Kind == wire.EventLost {
			lost += int(n.Params.Count)
		} else {
			received++
		}
	}
	if lost == 0 || received+lost != want {
		t.Fatalf("received %d, lost %d, want a loss and %d in all", received, lost, want)
	}
	// The notifications queued after the last event may still be coming.
	for notes < delivered+late {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%d of %d ui.notify: %v", notes, delivered+late, err)
		}
		if strings.Contains(string(line), `"ui.notify"`) {
			notes++
		}
	}
	if received < service.EventQueue {
		t.Fatalf("received only %d events; the queue holds %d", received, service.EventQueue)
	}
	t.Logf("received %d events, lost %d", received, lost)
}

// diagPerWindow is how many reports a flooding child gets delivered in
// the first 10 s.
const diagPerWindow = 5
