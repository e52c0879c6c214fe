package service_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// Each test here is one finding of the hostile-connection review, replayed
// against a real server on a real Unix socket.

func newStore(t testing.TB) *mailbox.Store {
	t.Helper()
	store, err := mailbox.Open(filepath.Join(t.TempDir(), "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func rawDial(t testing.TB, socket string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer waits until the server has closed c: a read sees EOF (or a
// reset) within d. Whatever c was sent before is read and discarded.
func closedByServer(t testing.TB, c net.Conn, d time.Duration) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// A peer with no token that sends requests and never reads its replies
// is dropped at the hello deadline, counted from accept, however busy it
// keeps the server. Meanwhile a child that says hello is answered at once.
func TestPendingPeerThatSendsIsClosedAtTheDeadline(t *testing.T) {
	store := newStore(t)
	// Unbounded replies here, so that only the deadline can close them.
	e := startConfig(t, service.Config{Mailbox: store, HelloTimeout: 500 * time.Millisecond, MaxUnsent: 1 << 40}, store)
	token := e.open("/root/ok")
	id := strings.Repeat("i", jsonframe.MaxIDBytes)
	frame := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"diagnostic.probe"}`+"\n", id))
	var wg sync.WaitGroup
	ended := make([]time.Duration, 16)
	for i := range ended {
		c := rawDial(t, e.socket)
		wg.Add(1)
		go func() {
			defer wg.Done()
			begin := time.Now()
			for time.Since(begin) < 10*time.Second {
				if _, err := c.Write(frame); err != nil {
					break
				}
			}
			ended[i] = time.Since(begin)
		}()
	}
	begin := time.Now()
	e.dial(token).mustCall("diagnostic.probe", nil)
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("a child's hello and probe took %v beside 16 senders", d)
	}
	wg.Wait()
	for i, d := range ended {
		if d >= 5*time.Second {
			t.Errorf("sender %d still connected after %v; the deadline is 500 ms", i, d)
		}
	}
	if st := e.srv.Stats(); st.HelloTimeouts < 16 {
		t.Errorf("stats %+v, want 16 hello timeouts", st)
	}
}

// At most MaxPending peers wait for their hello; a new one closes the
// oldest, so a child that says hello at once is never starved by a crowd.
func TestPendingLimitClosesTheOldest(t *testing.T) {
	store := newStore(t)
	e := startConfig(t, service.Config{Mailbox: store, MaxPending: 8, HelloTimeout: time.Minute}, store)
	token := e.open("/root/ok")
	crowd := make([]net.Conn, 40)
	for i := range crowd {
		crowd[i] = rawDial(t, e.socket)
	}
	begin := time.Now()
	e.dial(token).mustCall("diagnostic.probe", nil)
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("hello beside a crowd took %v", d)
	}
	// The 33 oldest (32 of the crowd, then one more for the child) are closed.
	for i, c := range crowd[:32] {
		if !closedByServer(t, c, 2*time.Second) {
			t.Fatalf("pending connection %d of 40 was not closed", i)
		}
	}
	// The newest of the crowd still get replies.
	c := crowd[39]
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":1,"method":"session.hello","params":{"token":%q}}`+"\n", token)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
		t.Fatalf("newest pending peer: %q, %v", line, err)
	}
	if st := e.srv.Stats(); st.PendingEvicted < 32 {
		t.Errorf("stats %+v, want at least 32 evictions", st)
	}
}

// A socket peer whose unsent replies pass the bound is disconnected; the
// server does not hold its replies in memory without end.
func TestNonReadingPeerIsDisconnectedOverTheUnsentBound(t *testing.T) {
	store := newStore(t)
	// A share large enough that the flood is not paced before it is over.
	e := startConfig(t, service.Config{Mailbox: store, MaxUnsent: 64 << 10, CostRate: 1 << 30, CostBurst: 1 << 30}, store)
	token := e.open("/root/slow")
	c := rawDial(t, e.socket)
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", token)
	frame := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"diagnostic.probe"}`+"\n", strings.Repeat("s", 256)))
	begin := time.Now()
	for time.Since(begin) < 20*time.Second {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(frame); err != nil {
			break
		}
	}
	if st := e.srv.Stats(); st.SlowPeers != 1 {
		t.Fatalf("stats %+v, want one slow peer disconnected", st)
	}
	e.dial(token).mustCall("diagnostic.probe", nil) // the token's other connections are unaffected
}

// One child token holds at most MaxConnsPerChild connections; the next
// hello gets -32007, and a slot freed by a close is usable again.
func TestConnectionsPerChildAreBounded(t *testing.T) {
	e := start(t, relay.ModeRPC)
	token := e.open("/root/many")
	peers := make([]*peer, service.DefaultMaxConnsPerChild)
	for i := range peers {
		peers[i] = e.dial(token)
	}
	extra := e.dial("")
	wantError(t, extra.call("session.hello", map[string]any{"token": token}),
		wire.CodeTooManyConns, "too many connections for this runtime")
	other := e.dial(e.open("/root/other")) // another child is unaffected
	other.mustCall("diagnostic.probe", nil)
	peers[0].closer.Close()
	testutil.Eventually(t, 5*time.Second, "a hello after a close", func() bool {
		return extra.call("session.hello", map[string]any{"token": token})["error"] == nil
	})
	if st := e.srv.Stats(); st.ConnLimited == 0 {
		t.Errorf("stats %+v, want refused hellos counted", st)
	}
}

// Closing (or reopening) a runtime closes every connection holding its
// token, after the reply to the request each has in flight.
func TestRevocationClosesEveryConnection(t *testing.T) {
	for _, how := range []string{"close", "reopen"} {
		t.Run(how, func(t *testing.T) {
			e := start(t, relay.ModeRPC)
			token := e.open("/root/r")
			conns := make([]net.Conn, 4)
			for i := range conns {
				conns[i] = rawDial(t, e.socket)
				fmt.Fprintf(conns[i], `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", token)
			}
			// Each pipelines reports; the revocation comes in between.
			for i, c := range conns {
				for j := range 50 {
					fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"info","message":"c%d r%d"}}`+"\n", j+1, i, j)
				}
			}
			if how == "close" {
				e.host.mustCall("runtime.close", map[string]any{"path": "/root/r"})
			} else {
				e.open("/root/r")
			}
			for i, c := range conns {
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						if line != "" {
							t.Fatalf("conn %d: a reply cut short: %q", i, line)
						}
						var ne net.Error
						if errors.As(err, &ne) && ne.Timeout() {
							t.Fatalf("conn %d still open 5 s after the %s", i, how)
						}
						break
					}
				}
			}
		})
	}
}

// Errors sent to a child name the field or the rule: no Go type, no host
// path, no internal error's text.
func TestErrorsToChildrenNameTheFieldOnly(t *testing.T) {
	store := newStore(t)
	fail := &failingMailbox{Store: store}
	e := startConfig(t, service.Config{Mailbox: fail}, store)
	child := e.dial(e.open("/root/e"))
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"level": "info", "message": 3.5}, `field "message" must be a string`},
		{map[string]any{"level": true, "message": "m"}, `field "level" must be a string`},
		{map[string]any{"level": "info", "message": "m", "source": []int{1}}, `field "source" must be a string`},
		{map[string]any{"level": "info", "message": nil}, `field "message" is required`},
	} {
		m := child.call("diagnostic.report", tc.params)
		wantError(t, m, wire.CodeInvalidParams, tc.want)
		if msg := m["error"].(map[string]any)["message"].(string); strings.Contains(msg, "float64") || strings.Contains(msg, "bool") {
			t.Errorf("error names a Go type: %q", msg)
		}
	}
	fail.err.Store(errors.New("truncate " + store.Path() + ": file too large"))
	m := child.call("diagnostic.report", map[string]any{"level": "info", "message": "disk full"})
	wantError(t, m, wire.CodeStorage, "could not store")
	if msg := m["error"].(map[string]any)["message"].(string); strings.Contains(msg, "/") || strings.Contains(msg, "truncate") {
		t.Errorf("-32005 shows host internals: %q", msg)
	}
}

// session.hello ignores ASCII whitespace around the token, so host.token's
// contents, newline included, work as they are.
func TestHelloTrimsWhitespace(t *testing.T) {
	e := start(t, relay.ModeRPC)
	token := e.open("/root/w")
	p := e.dial("")
	p.mustCall("session.hello", map[string]any{"token": " \t" + token + "\r\n"})
	p.mustCall("diagnostic.probe", nil)
	h := e.dial("")
	if r := h.mustCall("session.hello", map[string]any{"token": hostToken + "\n"}); r["role"] != "host" {
		t.Fatalf("host hello: %v", r)
	}
	wantError(t, e.dial("").call("session.hello", map[string]any{"token": token + "x"}), wire.CodeUnauthenticated, "unknown token")
}

// A host on stdio that stops reading loses ui.notify frames, counted, and
// never blocks a child: every report is still answered and stored.
func TestStuckHostLosesNotificationsNotReports(t *testing.T) {
	store := newStore(t)
	e := startConfig(t, service.Config{Mailbox: store, MaxUnsent: 4 << 10}, store)
	stuckIn, _ := io.Pipe()
	_, stuckOut := io.Pipe() // nobody reads its other end: every write blocks
	go e.srv.ServeHost(stuckIn, stuckOut)
	t.Cleanup(func() { stuckIn.Close(); stuckOut.Close() })
	begin := time.Now()
	for i := range 20 {
		p := e.dial(e.open(fmt.Sprintf("/root/n%d", i)))
		for j := range 5 {
			p.mustCall("diagnostic.report", map[string]any{"level": "info", "message": fmt.Sprintf("report %d of child %d", j, i)})
		}
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("100 reports took %v beside a stuck host", d)
	}
	if st := e.srv.Stats(); st.NotificationsDropped == 0 {
		t.Errorf("stats %+v: the stuck host's notifications were not dropped", st)
	}
	var read struct{ Messages []map[string]any }
	e.host.mustCallInto("mailbox.read", map[string]any{"recipient": "/root"}, &read)
	if len(read.Messages) != 100 {
		t.Fatalf("%d messages stored, want 100", len(read.Messages))
	}
}

// The hello deadline runs on the injected clock: firing its timer closes a
// peer still pending, and not one that has said hello.
func TestHelloDeadlineUsesTheInjectedClock(t *testing.T) {
	var mu sync.Mutex
	var timers []func()
	after := func(d time.Duration, f func()) func() bool {
		mu.Lock()
		defer mu.Unlock()
		if d == time.Hour { // the hello deadline; the relay's timers run at once
			timers = append(timers, f)
			return func() bool { return false }
		}
		return time.AfterFunc(d, f).Stop
	}
	store := newStore(t)
	e := startConfig(t, service.Config{Mailbox: store, HelloTimeout: time.Hour, AfterFunc: after}, store)
	token := e.open("/root/t")
	pending := rawDial(t, e.socket)
	helloed := e.dial(token)
	mu.Lock()
	fire := slices.Clone(timers)
	mu.Unlock()
	if len(fire) != 2 {
		t.Fatalf("%d hello timers, want 2", len(fire))
	}
	for _, f := range fire {
		f()
	}
	if !closedByServer(t, pending, 5*time.Second) {
		t.Fatal("the pending peer outlived its deadline")
	}
	helloed.mustCall("diagnostic.probe", nil)
	if st := e.srv.Stats(); st.HelloTimeouts != 1 {
		t.Fatalf("stats %+v, want one hello timeout", st)
	}
}
