//go:build linux || darwin

package service_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/sanitize"
	"github.com/diagrelay/diagrelay/service"
)

// openBound opens path through the host with the given bind member (nil:
// none) and returns the token.
func openBound(t testing.TB, e *env, path string, bind *bool) string {
	t.Helper()
	params := map[string]any{"path": path}
	if bind != nil {
		params["bind"] = *bind
	}
	var res struct {
		Token string `json:"token"`
	}
	e.host.mustCallInto("runtime.open", params, &res)
	return res.Token
}

var yes, no = true, false

// threadPeer is the peer members of a thread's status.
type threadPeer struct {
	Open bool `json:"open"`
	Peer *struct {
		PID int    `json:"pid"`
		UID uint32 `json:"uid"`
		Exe string `json:"exe"`
	} `json:"peer"`
	Exited      *time.Time `json:"exited"`
	PeerRefused uint64     `json:"peer_refused"`
}

func statusPeer(t *testing.T, e *env, path string) threadPeer {
	t.Helper()
	var st threadPeer
	e.host.mustCallInto("thread.status", map[string]any{"path": path}, &st)
	return st
}

func listPeer(t *testing.T, e *env, path string) threadPeer {
	t.Helper()
	var list struct {
		Threads []struct {
			Path string `json:"path"`
			threadPeer
		} `json:"threads"`
	}
	e.host.mustCallInto("thread.list", nil, &list)
	for _, th := range list.Threads {
		if th.Path == path {
			return th.threadPeer
		}
	}
	t.Fatalf("thread.list has no %s", path)
	return threadPeer{}
}

// The whole life of a bound token: the first process to say hello owns
// it, its descendant is let in, an unrelated process and the owner's own
// parent are refused (counted, -32001); the owner's exit shows in status,
// list and an event at the injected clock's time, closes the token's
// connections, and leaves the token refused and the thread readable.
func TestBoundTokenBelongsToItsProcess(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	e := startWith(t, relay.ModeRPC, newStore(t), func() time.Time { return at })
	e.host.mustCall("events.subscribe", nil)
	tok := openBound(t, e, "/root/b", &yes)
	if st := statusPeer(t, e, "/root/b"); st.Peer != nil || st.Exited != nil || st.PeerRefused != 0 {
		t.Fatalf("before any hello: %+v", st)
	}

	a := startHelper(t, e, "a", tok, helperOptions{spawn: true})
	if h := a.expectHello("a"); h["error"] != nil || h["result"].(map[string]any)["path"] != "/root/b" {
		t.Fatalf("the first process's hello: %v", h)
	}
	a.expect("a spawned")
	if h := a.expectHello("a/child"); h["error"] != nil {
		t.Fatalf("a descendant's hello: %v", h)
	}
	c := startHelper(t, e, "c", tok, helperOptions{})
	if h := c.expectHello("c"); !isError(h, wire.CodeUnauthenticated, "bound to another process") {
		t.Fatalf("an unrelated process's hello: %v", h)
	}
	// The test process is the owner's parent: not a descendant.
	wantError(t, e.dial("").call("session.hello", map[string]any{"token": tok}), wire.CodeUnauthenticated, "bound to another process")

	exe, _ := os.Executable()
	for _, st := range []threadPeer{statusPeer(t, e, "/root/b"), listPeer(t, e, "/root/b")} {
		if st.Peer == nil || st.Peer.PID != a.cmd.Process.Pid || st.Peer.UID != uint32(os.Getuid()) ||
			st.Peer.Exe != sanitize.Source(exe) || st.Exited != nil || st.PeerRefused != 2 || !st.Open {
			t.Fatalf("status while bound: %+v (peer %+v), want pid %d exe %q", st, st.Peer, a.cmd.Process.Pid, exe)
		}
	}
	if n := e.srv.Stats().PeerRefused; n != 2 {
		t.Fatalf("Stats.PeerRefused = %d", n)
	}

	a.kill() // the owner exits; its child lives on, connected
	a.expect("a/child closed")
	var exited map[string]any
	for _, ev := range waitEventsKind(t, e.host, "exited") {
		exited = ev
	}
	peerOf, _ := exited["peer"].(map[string]any)
	if exited["thread"] != "/root/b" || exited["at"] != at.Format(time.RFC3339Nano) || exited["generation"] != float64(1) ||
		peerOf["pid"] != float64(a.cmd.Process.Pid) || peerOf["exe"] != sanitize.Source(exe) {
		t.Fatalf("exited event: %v", exited)
	}
	for _, st := range []threadPeer{statusPeer(t, e, "/root/b"), listPeer(t, e, "/root/b")} {
		if st.Exited == nil || !st.Exited.Equal(at) || !st.Open || st.Peer == nil {
			t.Fatalf("status after the exit: %+v", st)
		}
	}
	// Refused to every process now, descendants included.
	d := startHelper(t, e, "d", tok, helperOptions{})
	if h := d.expectHello("d"); !isError(h, wire.CodeUnauthenticated, "bound to another process, which has exited") {
		t.Fatalf("a hello after the exit: %v", h)
	}
	e.host.mustCall("mailbox.read", map[string]any{"recipient": "/root/b"})
	e.host.mustCall("runtime.close", map[string]any{"path": "/root/b"})
	if st := statusPeer(t, e, "/root/b"); st.Open || st.Exited == nil || st.PeerRefused != 3 {
		t.Fatalf("status after close: %+v", st)
	}
}

// isError reports whether a reply is the error code with want in its
// message.
func isError(m map[string]any, code int, want string) bool {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return false
	}
	msg, _ := e["message"].(string)
	return int(e["code"].(float64)) == code && strings.Contains(msg, want)
}

// waitEventsKind waits up to 5 s for an event of kind on p and returns
// the events up to it.
func waitEventsKind(t *testing.T, p *peer, kind string) []map[string]any {
	t.Helper()
	var got []map[string]any
	testutil.Eventually(t, 5*time.Second, "a "+kind+" event", func() bool {
		for _, ev := range events(p.takeNotifications(0)) {
			if got = append(got, ev); ev["kind"] == kind {
				return true
			}
		}
		return false
	})
	return got
}

// Under BindPeer every token is bound unless runtime.open says bind:
// false; an unbound token works from any process.
func TestBindPeerDefaultAndOptOut(t *testing.T) {
	e := startConfig(t, service.Config{Mailbox: newStore(t), BindPeer: true, HelloTimeout: 2 * time.Second}, nil)
	bound := openBound(t, e, "/root/d", nil)
	free := openBound(t, e, "/root/f", &no)
	a := startHelper(t, e, "a", bound, helperOptions{})
	if h := a.expectHello("a"); h["error"] != nil {
		t.Fatal(h)
	}
	wantError(t, e.dial("").call("session.hello", map[string]any{"token": bound}), wire.CodeUnauthenticated, "bound to another process")
	f := startHelper(t, e, "f", free, helperOptions{})
	if h := f.expectHello("f"); h["error"] != nil {
		t.Fatal(h)
	}
	e.dial(free) // the test process too
	if st := statusPeer(t, e, "/root/f"); st.Peer != nil || st.PeerRefused != 0 {
		t.Fatalf("an unbound thread shows a peer: %+v", st)
	}
	// A nested child's open follows the same default.
	child := e.dial(free)
	var res struct{ Token string }
	child.mustCallInto("runtime.open", map[string]any{"path": "/root/f/g"}, &res)
	g := startHelper(t, e, "g", res.Token, helperOptions{})
	if h := g.expectHello("g"); h["error"] != nil {
		t.Fatal(h)
	}
	wantError(t, e.dial("").call("session.hello", map[string]any{"token": res.Token}), wire.CodeUnauthenticated, "bound to another process")
}

// A bound child's process, and its descendants, cannot say hello as the
// host; an unrelated process (the test) still can.
func TestBoundChildCannotBecomeTheHost(t *testing.T) {
	e := start(t, relay.ModeRPC)
	tok := openBound(t, e, "/root/h", &yes)
	a := startHelper(t, e, "a", tok, helperOptions{token2: hostToken, spawn: true, childToken: hostToken})
	if h := a.expectHello("a"); h["error"] != nil {
		t.Fatal(h)
	}
	if h := a.expect("a second"); !isError(decode(t, h), wire.CodeUnauthenticated, "cannot be the host") {
		t.Fatalf("the bound process as host: %s", h)
	}
	if h := a.expectHello("a/child"); !isError(h, wire.CodeUnauthenticated, "cannot be the host") {
		t.Fatalf("its descendant as host: %v", h)
	}
	if n := e.srv.Stats().HostRefused; n != 2 {
		t.Fatalf("Stats.HostRefused = %d", n)
	}
	e.dial(hostToken).mustCall("thread.list", nil)
}

// A child's process that said hello as the host before its first bound
// hello does not stay the host: the claim closes its host connection, and
// those of its descendants, each counted as refused; a host connection of
// an unrelated process (the test) stays, and so does that of the process
// that started the claimer (a parent pi is its children's host).
func TestClaimClosesHosts(t *testing.T) {
	e := start(t, relay.ModeRPC)
	unrelated := e.dial(hostToken)
	unrelated.mustCall("thread.list", nil)

	// The claiming process itself.
	tok := openBound(t, e, "/root/self", &yes)
	a := startHelper(t, e, "a", hostToken, helperOptions{token2: tok})
	if h := a.expectHello("a"); h["error"] != nil {
		t.Fatalf("a's host hello: %v", h)
	}
	// The bound hello's reply and the close of its host connection, in
	// either order.
	if got := a.expectAll("a second", "a closed"); decode(t, got["a second"])["error"] != nil {
		t.Fatalf("a's bound hello: %s", got["a second"])
	}
	if st := statusPeer(t, e, "/root/self"); st.PeerRefused != 1 {
		t.Fatalf("peer_refused %d, want 1", st.PeerRefused)
	}

	// Its descendant, host first; the claimer's own first connection is
	// a host connection too.
	tok2 := openBound(t, e, "/root/desc", &yes)
	b := startHelper(t, e, "b", hostToken, helperOptions{spawnFirst: true, childToken: hostToken, token2: tok2})
	if h := b.expectHello("b"); h["error"] != nil {
		t.Fatalf("b's host hello: %v", h)
	}
	if h := b.expectHello("b/child"); h["error"] != nil {
		t.Fatalf("b's child's host hello: %v", h)
	}
	if got := b.expectAll("b second", "b closed", "b/child closed"); decode(t, got["b second"])["error"] != nil {
		t.Fatalf("b's bound hello: %s", got["b second"])
	}
	if st := statusPeer(t, e, "/root/desc"); st.PeerRefused != 2 {
		t.Fatalf("peer_refused %d, want 2", st.PeerRefused)
	}

	// The claimer's parent: a host whose child claims a token.
	tok3 := openBound(t, e, "/root/parent", &yes)
	p := startHelper(t, e, "p", hostToken, helperOptions{spawn: true, childToken: tok3})
	if h := p.expectHello("p"); h["error"] != nil {
		t.Fatalf("p's host hello: %v", h)
	}
	if h := p.expectHello("p/child"); h["error"] != nil {
		t.Fatalf("p's child's bound hello: %v", h)
	}
	if st := statusPeer(t, e, "/root/parent"); st.PeerRefused != 0 {
		t.Fatalf("the parent's host connection was refused: %+v", st)
	}
	if n := e.srv.Stats().PeerRefused; n != 3 {
		t.Fatalf("Stats.PeerRefused = %d, want 3", n)
	}
	// The counts above say the server closed nothing (closeHostsUnder
	// counts before the hello's reply). That the helper saw no close either:
	// a close the server makes later, of p's child's connection by the
	// runtime's close, comes through the same pipe; p's, made earlier,
	// would have come by then.
	unrelated.mustCall("runtime.close", map[string]string{"path": "/root/parent"})
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l := <-p.lines:
			switch l {
			case "p closed":
				t.Fatal("the parent's host connection was closed")
			case "p/child closed":
				return
			}
		case <-timeout:
			t.Fatal("no \"p/child closed\" within 10 s of the runtime's close")
		}
	}
}

// A peer of another user (nobody) is closed before anything it sends is
// read; root peers and the service's own user are let in.
func TestPeerOfAnotherUserIsClosed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a peer as nobody")
	}
	e := start(t, relay.ModeRPC)
	tok := e.open("/root/u")
	// nobody must reach the socket and run the test binary.
	dir := filepath.Dir(e.socket)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.socket, 0o777); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	exe := filepath.Join(dir, "peer.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	h := startHelper(t, e, "n", tok, helperOptions{cred: &syscall.Credential{Uid: nobody, Gid: nobody}, exe: exe})
	if got := h.expect("n "); got != "closed" {
		t.Fatalf("a peer of uid %d got %q, want the connection closed", nobody, got)
	}
	if n := e.srv.Stats().ForeignPeers; n != 1 {
		t.Fatalf("Stats.ForeignPeers = %d", n)
	}
	if st := statusPeer(t, e, "/root/u"); st.PeerRefused != 0 {
		t.Fatalf("status: %+v", st)
	}
	e.dial(tok).mustCall("diagnostic.probe", nil) // the service's own user is let in
}

// decode parses a reply line printed by a helper.
func decode(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return m
}
