package cluster

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/diagrelay/diagrelay/internal/rpc"

	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// TestHomeAndEdge runs the chain end to end against a real JetStream: a
// host opens a thread on the home, its child reports through an edge, and
// the report reaches the home's mailbox and status, sanitized and gated
// at the edge; a second edge refuses the claimed token; close on the home
// revokes the token at the edge within 1 s.
func TestHomeAndEdge(t *testing.T) {
	ns := natstest.Start(t)
	home := startHome(t, ns)
	edge := startEdge(t, ns, "sandbox-1")
	other := startEdge(t, ns, "sandbox-2")

	notes := hostNotes(t, home)
	rt, err := home.host.Open("/root/lint", client.OpenOptions{Parent: "/root"})
	if err != nil {
		t.Fatal(err)
	}
	child, err := dialRaw(t, edge.sock, rt.Token)
	if err != nil {
		t.Fatalf("hello at the edge: %v", err)
	}
	// Escapes and a Bidi override, sanitized at the edge.
	if err := child.report("warning", "eslint \x1b]0;pwned\x07missing\u202e", "pi-lint"); err != nil {
		t.Fatalf("report: %v", err)
	}
	var st wire.Status
	testutil.Eventually(t, 5*time.Second, "the report in the home's status", func() bool {
		st, err = home.host.Status("/root/lint")
		return err == nil && len(st.Diagnostics) == 1
	})
	d := st.Diagnostics[0]
	if d.Level != "warning" || d.Source != "pi-lint" || strings.ContainsAny(d.Message, "\x1b\x07\u202e") || !strings.Contains(d.Message, "eslint") {
		t.Fatalf("status diagnostic %+v: not sanitized or not as sent", d)
	}
	if st.Edge != "sandbox-1" {
		t.Errorf("status edge %q, want sandbox-1", st.Edge)
	}
	select { // the home's host gets the notification, as for a local report
	case n := <-notes:
		if !strings.HasPrefix(n, "/root/lint [pi-lint]: eslint") || strings.ContainsAny(n, "\x1b\x07\u202e") {
			t.Errorf("ui.notify %q", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no ui.notify at the home")
	}
	msgs, err := home.store.Read("/root", 10)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("home mailbox for /root: %v %v", msgs, err)
	}
	if m := msgs[0]; m.From != "/root/lint" || m.Message != d.Message || !strings.Contains(m.Text, "untrusted") {
		t.Errorf("mailbox entry %+v", m)
	}

	// The gate runs at the edge: a duplicate is dropped there, answered
	// {} like a delivery, and its count reaches the home's status.
	if err := child.report("warning", "eslint \x1b]0;pwned\x07missing\u202e", "pi-lint"); err != nil {
		t.Fatalf("duplicate report: %v", err)
	}
	testutil.Eventually(t, 5*time.Second, "the edge's duplicate drop in the home's status", func() bool {
		st, err = home.host.Status("/root/lint")
		return err == nil && st.Dropped.Duplicate == 1
	})
	if len(st.Diagnostics) != 1 {
		t.Errorf("the duplicate was delivered: %d diagnostics", len(st.Diagnostics))
	}

	// Another edge refuses a token this edge claimed.
	if _, err := dialRaw(t, other.sock, rt.Token); code(err) != wire.CodeUnauthenticated || !strings.Contains(err.Error(), "claimed") {
		t.Errorf("hello at a second edge: %v, want -32001 claimed", err)
	}
	// The home refuses it too, for a local child.
	if _, err := dialRaw(t, home.sock, rt.Token); code(err) != wire.CodeUnauthenticated {
		t.Errorf("hello at the home: %v, want -32001", err)
	}
	// A token nobody issued.
	if _, err := dialRaw(t, edge.sock, strings.Repeat("ab", 32)); code(err) != wire.CodeUnauthenticated {
		t.Errorf("unknown token at the edge: %v, want -32001", err)
	}

	// Close on the home revokes the token at the edge within 1 s.
	start := time.Now()
	if err := home.host.CloseRuntime("/root/lint"); err != nil {
		t.Fatal(err)
	}
	late := 0 // acknowledged in the revocation window: delivered, never lost
	testutil.Eventually(t, time.Second, "the edge refusing the closed token's reports", func() bool {
		if child.report("info", "after close "+time.Now().String(), "") != nil {
			return true
		}
		late++
		return false
	})
	t.Logf("revoked at the edge %v after close", time.Since(start).Round(time.Millisecond))
	if _, err := dialRaw(t, edge.sock, rt.Token); code(err) != wire.CodeRevoked {
		t.Errorf("hello after close: %v, want -32003", err)
	}
	testutil.Eventually(t, 5*time.Second, "every acknowledged report delivered", func() bool {
		return home.h.Stats().Delivered == uint64(1+late)
	})
	if hs := home.h.Stats(); hs.Refused != 0 || hs.Duplicates != 0 {
		t.Errorf("home stats %+v: want none refused or duplicate", hs)
	}
}

// TestReopenRevokesAtEdge: a reopen on the home issues a new token; the
// old one stops working at the edge, and the new one is claimed afresh.
func TestReopenRevokesAtEdge(t *testing.T) {
	ns := natstest.Start(t)
	home := startHome(t, ns)
	edge := startEdge(t, ns, "e1")
	rt1, err := home.host.Open("/k", client.OpenOptions{Owner: "/root"})
	if err != nil {
		t.Fatal(err)
	}
	c1, err := dialRaw(t, edge.sock, rt1.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.report("error", "first", ""); err != nil {
		t.Fatal(err)
	}
	rt2, err := home.host.Open("/k", client.OpenOptions{Owner: "/root"})
	if err != nil {
		t.Fatal(err)
	}
	late := 0 // acknowledged before the revocation reached the edge: delivered
	testutil.Eventually(t, time.Second, "the old token revoked at the edge", func() bool {
		if c1.report("error", "old "+time.Now().String(), "") != nil {
			return true
		}
		late++
		return false
	})
	c2, err := dialRaw(t, edge.sock, rt2.Token)
	if err != nil {
		t.Fatalf("new token at the edge: %v", err)
	}
	if err := c2.report("error", "second", ""); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "every acknowledged report in /root's mailbox", func() bool {
		msgs, err := home.store.Read("/root", 100)
		return err == nil && len(msgs) == 2+late
	})
	msgs, _ := home.store.Read("/root", 100)
	for _, m := range msgs {
		if m.Level != diag.Error || m.From != "/k" {
			t.Errorf("mailbox entry %+v", m)
		}
	}
}

// TestRefusesLazyFsync: a JetStream that does not sync every write is
// refused by home and edge, unless allowed; so is one whose setting
// cannot be read.
func TestRefusesLazyFsync(t *testing.T) {
	ns := natstest.StartWith(t, &natstest.Server{Dir: t.TempDir(), LazyFsync: true})
	_, err := NewHome(t.Context(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL})
	if err == nil || !strings.Contains(err.Error(), "sync") || !strings.Contains(err.Error(), "--allow-lazy-fsync") {
		t.Fatalf("home on a lazy JetStream: %v", err)
	}
	_, err = NewHome(t.Context(), Config{URL: ns.URL})
	if err == nil || !strings.Contains(err.Error(), "--nats-monitor") {
		t.Fatalf("home without a monitor URL: %v", err)
	}
	h, err := NewHome(t.Context(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, AllowLazyFsync: true})
	if err != nil {
		t.Fatalf("home allowed lazy fsync: %v", err)
	}
	h.Close()
	_, err = NewEdge(t.Context(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Name: "e"})
	if err == nil || !strings.Contains(err.Error(), "--allow-lazy-fsync") {
		t.Fatalf("edge on a lazy JetStream: %v", err)
	}
}

// TestClaimIgnoresOlderRevisions: the bucket's watch may bring the entry as
// the home created it (unclaimed) after the edge's own claim; that must not
// revoke the claim (found by BenchmarkNotifyLatency: children's connections
// closed at random), while any later change that ends it does.
func TestClaimIgnoresOlderRevisions(t *testing.T) {
	c := claimed{path: "/root/a", rev: 7}
	open := entry{Path: "/root/a", Open: true}
	mine := open
	mine.Edge = "e1"
	closed := mine
	closed.Open = false
	other := mine
	other.Edge = "e2"
	for _, tt := range []struct {
		rev  uint64
		en   entry
		ok   bool
		want bool
	}{
		{6, open, true, false},    // the home's create, seen late
		{7, mine, true, false},    // the claim itself
		{8, mine, true, false},    // a rewrite that keeps it
		{8, closed, true, true},   // reopen or close on the home
		{8, other, true, true},    // claimed away (only a confused writer)
		{8, entry{}, false, true}, // deleted or unreadable
		{5, entry{}, false, false},
	} {
		if got := c.revokedBy(tt.rev, tt.en, tt.ok, "e1"); got != tt.want {
			t.Errorf("revision %d %+v ok %v: revoked %v, want %v", tt.rev, tt.en, tt.ok, got, tt.want)
		}
	}
}

// hostNotes connects a second host to the home and returns the messages of
// the ui.notify notifications it gets.
func hostNotes(t *testing.T, home *testHome) <-chan string {
	nc, err := net.Dial("unix", home.sock)
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.New(nc, nc, nc, rpc.Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	if err := c.Call(wire.MethodHello, wire.HelloParams{Token: home.token}, nil); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	go func() {
		for n := range c.Notifications() {
			var p struct {
				Message string `json:"message"`
			}
			if n.Method == wire.NotifyUI && json.Unmarshal(n.Params, &p) == nil {
				out <- p.Message
			}
		}
	}()
	return out
}

// TestHomePurgesWhatItAcknowledged: the stream has limits retention, so an
// acknowledgement writes nothing to it, and the home purges the reports it
// acknowledged (every PruneEvery), so the stream does not fill with them.
func TestHomePurgesWhatItAcknowledged(t *testing.T) {
	ns := natstest.Start(t)
	home := startHome(t, ns)
	edge := startEdge(t, ns, "e1")
	rt, err := home.host.Open("/root/p", client.OpenOptions{Parent: "/root"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialRaw(t, edge.sock, rt.Token)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"one", "two", "three"} {
		if err := c.report("warning", m, ""); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the home delivers the reports", func() bool { return home.h.Stats().Delivered == 3 })
	var si *jetstream.StreamInfo
	testutil.EventuallyShow(t, 10*time.Second, func() bool {
		si, err = home.h.l.stream.Info(t.Context())
		return err == nil && si.State.Msgs == 0
	}, func() string { return "the acknowledged reports stay in the stream: " + stateOf(si, err) })
	if si.Config.Retention != jetstream.LimitsPolicy {
		t.Errorf("retention %v, want limits", si.Config.Retention)
	}
	if si.State.LastSeq < 3 {
		t.Errorf("the stream's last sequence %d: the reports never reached it", si.State.LastSeq)
	}
}

func stateOf(si *jetstream.StreamInfo, err error) string {
	if err != nil || si == nil {
		return fmt.Sprint("no info: ", err)
	}
	return fmt.Sprintf("msgs %d, first %d, last %d", si.State.Msgs, si.State.FirstSeq, si.State.LastSeq)
}

// TestHomeKeepsAWorkQueueStream: a stream made with work-queue retention
// cannot be changed to limits, and deleting it could lose what an edge just
// published: the home keeps it as it is and says so.
func TestHomeKeepsAWorkQueueStream(t *testing.T) {
	ns := natstest.Start(t)
	js := ns.JetStream(t)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: StreamName, Subjects: []string{ReportSubject + ".*", CountsSubject + ".*"},
		Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy, Discard: jetstream.DiscardNew,
		MaxBytes: DefaultStreamBytes, MaxMsgSize: maxMessageBytes, Duplicates: DefaultDuplicates}); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	h, err := NewHome(context.Background(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	si, err := h.l.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.Retention != jetstream.WorkQueuePolicy {
		t.Errorf("retention %v, want the work queue it was made with", si.Config.Retention)
	}
	if !strings.Contains(log.String(), "work-queue retention") {
		t.Errorf("the home did not say so:\n%s", log)
	}
}
