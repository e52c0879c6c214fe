package service_test

import (
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// On a kernel without SO_PEERPIDFD a process is its pid and start time,
// and a bound process's exit is its token's last connection closing: a
// descendant's connection keeps the token alive, and once the last one
// closes the thread shows the exit and the token is refused.
func TestBoundTokenWithoutPidfd(t *testing.T) {
	defer service.NoPidfd()()
	at := time.Date(2026, 12, 1, 20, 30, 0, 0, time.UTC)
	e := startWith(t, relay.ModeRPC, newStore(t), func() time.Time { return at })
	e.host.mustCall("events.subscribe", nil)
	tok := openBound(t, e, "/root/o", &yes)
	a := startHelper(t, e, "a", tok, helperOptions{spawn: true})
	if h := a.expectHello("a"); h["error"] != nil {
		t.Fatal(h)
	}
	if h := a.expectHello("a/child"); h["error"] != nil {
		t.Fatalf("a descendant's hello: %v", h)
	}
	wantError(t, e.dial("").call("session.hello", map[string]any{"token": tok}), wire.CodeUnauthenticated, "bound to another process")
	conns := service.ConnCount(e.srv)
	a.kill() // its connection closes; its child's holds the token
	testutil.Eventually(t, 5*time.Second, "the server sees the owner's connection close", func() bool { return service.ConnCount(e.srv) < conns })
	if st := statusPeer(t, e, "/root/o"); st.Exited != nil {
		t.Fatalf("exited while a descendant holds the token: %+v", st)
	}
	// The owner is gone: no new hello passes, its descendant's included.
	wantError(t, e.dial("").call("session.hello", map[string]any{"token": tok}), wire.CodeUnauthenticated, "bound to another process")
	a.stop() // the child ends: the token's last connection closes
	waitEventsKind(t, e.host, "exited")
	if st := statusPeer(t, e, "/root/o"); st.Exited == nil || !st.Exited.Equal(at) || !st.Open {
		t.Fatalf("status after the last connection closed: %+v", st)
	}
}

// On a kernel without SO_PEERPIDFD a spawned child's exit is its token's
// last connection closing: its thread is closed then, and its place below
// the spawn token's path is free again. The stdio host's process is the
// test binary's parent, so the test process may use the spawn token.
func TestSpawnedThreadClosesWithoutPidfd(t *testing.T) {
	defer service.NoPidfd()()
	e := startConfig(t, service.Config{Mode: relay.ModeRPC, MaxNested: 1}, nil)
	var st wire.SpawnToken
	e.host.mustCallInto(wire.MethodSpawnToken, wire.PathParams{Path: "/root"}, &st)
	opener := e.dial("")
	var res wire.OpenResult
	opener.mustCallInto(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: st.Token, Path: "/root/a"}, &res)
	child := e.dial(res.Token) // the opening process's hello is admitted
	child.mustCall("diagnostic.report", map[string]any{"level": "info", "message": "spawned"})
	wantError(t, opener.call(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: st.Token, Path: "/root/b"}), wire.CodeTooManyConns, "too many nested runtimes (at most 1 live below /root)")

	child.closer.Close() // the token's last connection
	var s relay.Status
	testutil.Eventually(t, 10*time.Second, "/root/a closed with its last connection", func() bool {
		e.host.mustCallInto(wire.MethodThreadStatus, wire.PathParams{Path: "/root/a"}, &s)
		return !s.Open
	})
	if len(s.Diagnostics) != 1 {
		t.Fatalf("/root/a after its last connection closed: %+v", s)
	}
	opener.mustCallInto(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: st.Token, Path: "/root/b"}, &res)
}
