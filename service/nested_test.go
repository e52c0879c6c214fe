package service_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// openAs opens path through p (a host or a child connection) and returns
// the token.
func openAs(t *testing.T, p *peer, path string) string {
	t.Helper()
	var res wire.OpenResult
	p.mustCallInto(wire.MethodRuntimeOpen, wire.OpenParams{Path: path}, &res)
	if len(res.Token) != 64 {
		t.Fatalf("runtime.open %s gave token %q", path, res.Token)
	}
	return res.Token
}

// A child hosts its own child: it opens it, the grandchild reports, the
// report goes to the child's mailbox (its lexical parent's), and the child
// reads its status and mailbox, acks, and closes it.
func TestNestedChildHostsAGrandchild(t *testing.T) {
	e := start(t, relay.ModeRPC)
	child := e.dial(e.open("/root/x"))
	grand := e.dial(openAs(t, child, "/root/x/y"))
	grand.mustCall("diagnostic.report", map[string]any{"level": "warning", "message": "from below", "source": "lint"})

	var st relay.Status
	child.mustCallInto("thread.status", map[string]any{"path": "/root/x/y"}, &st)
	if st.Parent != "/root/x" || !st.Open || len(st.Diagnostics) != 1 || st.Diagnostics[0].Message != "from below" {
		t.Fatalf("child's thread.status = %+v", st)
	}
	var page wire.Page
	child.mustCallInto("mailbox.read", map[string]any{"recipient": "/root/x"}, &page)
	if len(page.Messages) != 1 || page.Messages[0].From != "/root/x/y" || page.Messages[0].Recipient != "/root/x" {
		t.Fatalf("child's mailbox = %+v", page)
	}
	e.host.mustCallInto("mailbox.read", map[string]any{"recipient": "/root"}, &page)
	if len(page.Messages) != 0 {
		t.Fatalf("the grandchild's report reached /root: %+v", page)
	}
	if r := child.mustCall("mailbox.ack", map[string]any{"recipient": "/root/x", "ids": []uint64{1, 2, 3}}); r["acked"] != float64(1) {
		t.Fatalf("ack = %v", r)
	}
	// The grandchild's notification reaches the root host's UI.
	if ns := e.host.takeNotifications(1); len(ns) != 1 || ns[0]["params"].(map[string]any)["thread"] != "/root/x/y" {
		t.Fatalf("host notifications = %v", ns)
	}
	child.mustCall("runtime.close", map[string]any{"path": "/root/x/y"})
	waitClosed(t, grand)
	// Deeper: the grandchild's own child reports to the grandchild.
	grand = e.dial(openAs(t, child, "/root/x/y"))
	great := e.dial(openAs(t, grand, "/root/x/y/z"))
	great.mustCall("diagnostic.report", map[string]any{"level": "info", "message": "deep"})
	grand.mustCallInto("mailbox.read", map[string]any{"recipient": "/root/x/y"}, &page)
	if len(page.Messages) != 1 || page.Messages[0].From != "/root/x/y/z" {
		t.Fatalf("grandchild's mailbox = %+v", page)
	}
}

// Every rule of a child's scope, each refused with -32002 naming it, and
// the connection still usable after each.
func TestNestedChildScope(t *testing.T) {
	e := start(t, relay.ModeRPC)
	child := e.dial(e.open("/root/x"))
	e.open("/root/z")
	openAs(t, child, "/root/x/y")
	below := "only for threads below its own thread /root/x"
	own := "only for its own thread /root/x"
	cases := []struct {
		method string
		params map[string]any
		code   int
		want   string
	}{
		{"runtime.open", map[string]any{"path": "/root/x"}, wire.CodeForbidden, below},
		{"runtime.open", map[string]any{"path": "/root/z/a"}, wire.CodeForbidden, below},
		{"runtime.open", map[string]any{"path": "/root/xy"}, wire.CodeForbidden, below}, // a prefix, not a parent
		{"runtime.open", map[string]any{"path": "/k", "owner": "/root/x"}, wire.CodeForbidden, below},
		{"runtime.open", map[string]any{"path": "/root/x/bad path"}, wire.CodeInvalidParams, `"path"`},
		{"runtime.open", map[string]any{}, wire.CodeInvalidParams, `"path" is required`},
		{"runtime.open", map[string]any{"path": "/root/x/y", "parent": "/root"}, wire.CodeInvalidParams, "lexical parent"},
		{"runtime.close", map[string]any{"path": "/root/x"}, wire.CodeForbidden, below},
		{"runtime.close", map[string]any{"path": "/root/z"}, wire.CodeForbidden, below},
		{"runtime.close", map[string]any{"path": "/root/x/never"}, wire.CodeUnknownThread, "never opened"},
		{"thread.status", map[string]any{"path": "/root/x"}, wire.CodeForbidden, below},
		{"thread.status", map[string]any{"path": "/root/z"}, wire.CodeForbidden, below},
		{"thread.status", map[string]any{"path": 7}, wire.CodeInvalidParams, `"path"`},
		{"mailbox.read", map[string]any{"recipient": "/root"}, wire.CodeForbidden, own},
		{"mailbox.read", map[string]any{"recipient": "/root/x/y"}, wire.CodeForbidden, own},
		{"mailbox.read", map[string]any{"recipient": "/root/x", "limit": 0}, wire.CodeInvalidParams, `"limit"`},
		{"mailbox.ack", map[string]any{"recipient": "/root/z", "ids": []int{1}}, wire.CodeForbidden, own},
		{"mailbox.ack", map[string]any{"recipient": "/root/x"}, wire.CodeInvalidParams, `"ids"`},
		{"thread.list", nil, wire.CodeForbidden, "host method"},
		{"events.subscribe", nil, wire.CodeForbidden, "host method"},
		{"capabilities.probe", nil, wire.CodeForbidden, "host method"},
	}
	for _, c := range cases {
		wantError(t, child.call(c.method, c.params), c.code, c.want)
		child.mustCall("diagnostic.probe", nil)
	}
	// Nothing refused was done: /root/z is open, /root/x/y too.
	var st relay.Status
	e.host.mustCallInto("thread.status", map[string]any{"path": "/root/z"}, &st)
	if !st.Open || st.Generation != 1 {
		t.Fatalf("/root/z after the refusals: %+v", st)
	}
	e.host.mustCallInto("thread.status", map[string]any{"path": "/root/x/y"}, &st)
	if !st.Open || st.Generation != 1 {
		t.Fatalf("/root/x/y after the refusals: %+v", st)
	}
	// A child of an independent root has the same scope.
	k := e.dial(openAs(t, e.host, "/k"))
	openAs(t, k, "/k/l")
	wantError(t, k.call("runtime.open", map[string]any{"path": "/root/k"}), wire.CodeForbidden, "below its own thread /k")
}

// What a child opened ends with the child's generation: closing or
// reopening the child closes its children and theirs (their tokens are
// revoked, their connections closed), while their status and mailboxes
// stay readable; what the host opened below the child is the host's.
func TestNestedChildrenEndWithTheirOpener(t *testing.T) {
	for _, end := range []string{"close", "reopen"} {
		t.Run(end, func(t *testing.T) {
			e := startSocketOnly(t, service.Config{NotifyRate: 1000, NotifyBurst: 1000})
			e.host.mustCall("events.subscribe", nil)
			child := e.dial(openAs(t, e.host, "/root/x"))
			yTok := openAs(t, child, "/root/x/y")
			grand := e.dial(yTok)
			great := e.dial(openAs(t, grand, "/root/x/y/z"))
			hostOwn := e.dial(openAs(t, e.host, "/root/x/h"))
			grand.mustCall("diagnostic.report", map[string]any{"level": "info", "message": "kept"})
			waitEvents(t, e.host, 6) // 4 opened, delivered, notified

			if end == "close" {
				e.host.mustCall("runtime.close", map[string]any{"path": "/root/x"})
			} else {
				openAs(t, e.host, "/root/x")
			}
			waitClosed(t, child)
			waitClosed(t, grand)
			waitClosed(t, great)
			wantError(t, e.dial("").call("session.hello", map[string]any{"token": yTok}), wire.CodeRevoked, "revoked")
			hostOwn.mustCall("diagnostic.probe", nil) // the host's own child lives on

			closed := map[string]bool{}
			for _, ev := range waitEvents(t, e.host, 3) {
				if ev["kind"] == "closed" {
					closed[ev["thread"].(string)] = true
				}
			}
			if !closed["/root/x/y"] || !closed["/root/x/y/z"] || closed["/root/x/h"] || closed["/root/x"] != (end == "close") {
				t.Fatalf("closed events: %v", closed)
			}
			var st relay.Status
			e.host.mustCallInto("thread.status", map[string]any{"path": "/root/x/y"}, &st)
			if st.Open || len(st.Diagnostics) != 1 {
				t.Fatalf("/root/x/y after its opener ended: %+v", st)
			}
			e.host.mustCallInto("thread.status", map[string]any{"path": "/root/x/h"}, &st)
			if !st.Open {
				t.Fatalf("/root/x/h closed with /root/x: %+v", st)
			}
			var page wire.Page
			e.host.mustCallInto("mailbox.read", map[string]any{"recipient": "/root/x"}, &page)
			if len(page.Messages) != 1 || page.Messages[0].Message != "kept" {
				t.Fatalf("/root/x's mailbox: %+v", page)
			}
		})
	}
}

// An open racing with the end of its opener's generation never leaves a
// runtime open behind it: either it ran first and is closed with its
// opener, or it runs after and is refused (-32003), checked under the same
// lock as the reopen.
func TestOpenRacingItsOpenersEnd(t *testing.T) {
	e := start(t, relay.ModeRPC)
	tok := e.open("/root/x")
	for i := range 30 {
		child := e.dial(tok)
		path := fmt.Sprintf("/root/x/g%d", i)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "runtime.open", "params": map[string]any{"path": path}})
		child.send(string(b))
		tok = e.open("/root/x") // reopen, concurrent with the child's open
		select {
		case m, ok := <-child.replies:
			if ok && m["error"] != nil {
				wantError(t, m, wire.CodeRevoked, "revoked")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no reply and no close")
		}
		if st := e.host.call("thread.status", map[string]any{"path": path}); st["error"] == nil {
			if st["result"].(map[string]any)["open"] != false {
				t.Fatalf("%s outlived its opener: %v", path, st)
			}
		}
	}
}

// A top-level child holds at most Config.MaxNested live threads below it,
// its children's children included: past that runtime.open gets -32007,
// and the refused open did nothing. A reopen of a thread it holds, and an
// open after a close, fit; what the host opens below it does not count.
func TestNestedLimit(t *testing.T) {
	e := startConfig(t, service.Config{Mode: relay.ModeRPC, MaxNested: 3}, nil)
	child := e.dial(e.open("/root/x"))
	e.open("/root/x/h") // the host's, not counted
	openAs(t, child, "/root/x/a")
	grand := e.dial(openAs(t, child, "/root/x/b"))
	openAs(t, grand, "/root/x/b/c") // the grandchild's open counts for /root/x
	for _, p := range []*peer{child, grand} {
		wantError(t, p.call("runtime.open", map[string]any{"path": "/root/x/b/d"}), wire.CodeTooManyConns, "too many nested runtimes (at most 3 live below /root/x)")
		p.mustCall("diagnostic.probe", nil) // still usable
	}
	if st := e.host.call("thread.status", map[string]any{"path": "/root/x/b/d"}); st["error"] == nil {
		t.Fatalf("the refused open opened the thread: %v", st)
	}
	openAs(t, child, "/root/x/a") // a reopen: still three
	if n := e.srv.Stats().NestedLimited; n != 2 {
		t.Fatalf("NestedLimited = %d, want 2", n)
	}
	child.mustCall("runtime.close", map[string]any{"path": "/root/x/a"})
	openAs(t, grand, "/root/x/b/d")
	// Another top-level child has its own count.
	other := e.dial(e.open("/root/y"))
	for _, p := range []string{"/root/y/1", "/root/y/2", "/root/y/3"} {
		openAs(t, other, p)
	}
	// Closing the grandchild closes what it opened: all three are free.
	child.mustCall("runtime.close", map[string]any{"path": "/root/x/b"})
	for _, p := range []string{"/root/x/e", "/root/x/f", "/root/x/g"} {
		openAs(t, child, p)
	}
	wantError(t, child.call("runtime.open", map[string]any{"path": "/root/x/i"}), wire.CodeTooManyConns, "too many nested runtimes")
}
