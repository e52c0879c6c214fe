package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
	"github.com/diagrelay/diagrelay/threadpath"
)

// bareHome is a Home whose messages the test hands to handle one at a
// time (Start is not called: no watch, no consumer loop), over a real
// JetStream and a real mailbox file.
type bareHome struct {
	h     *Home
	m     *relay.Manager
	store *mailbox.Store
	log   *syncBuffer
}

func startBareHome(t *testing.T, ns *natstest.Server) *bareHome {
	t.Helper()
	store, err := mailbox.Open(filepath.Join(testutil.ShortTempDir(t), "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	h, err := NewHome(t.Context(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Logger: slog.New(slog.NewTextHandler(buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := service.New(service.Config{Mailbox: store, HostToken: service.NewToken(), Directory: h, Mode: relay.ModeRPC})
	t.Cleanup(func() {
		shutdown(srv)
		h.Close()
		store.Close()
	})
	return &bareHome{h: h, m: srv.Manager(), store: store, log: buf}
}

// open writes a token's entry for path as runtime.open would.
func (b *bareHome) open(t *testing.T, path string) string {
	t.Helper()
	tok := service.NewToken()
	if err := b.h.Opened(tok, service.DirectoryEntry{Path: path, Parent: threadpath.LexicalParent(path), Generation: 1}); err != nil {
		t.Fatal(err)
	}
	return tok
}

// next fetches the consumer's next message and hands it to handle; false
// when none came within wait.
func (b *bareHome) next(t *testing.T, wait time.Duration) bool {
	t.Helper()
	batch, err := b.h.cons.Fetch(1, jetstream.FetchMaxWait(wait))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for msg := range batch.Messages() {
		b.h.handle(b.m, msg)
		n++
	}
	return n > 0
}

// publish sends a report for path under tok's hash as edge, as an edge
// would (or one that lies).
func publish(t *testing.T, ns *natstest.Server, edge, tok, path, text string) {
	t.Helper()
	js := ns.JetStream(t)
	h := sha256.Sum256([]byte(tok))
	body := encodeMsg(reportMsg{V: msgVersion, Token: hex.EncodeToString(h[:]), Path: path, Level: "warning", Message: text, At: time.Now().UTC()})
	msg := &nats.Msg{Subject: ReportSubject + "." + edge, Data: body}
	if _, err := js.PublishMsg(t.Context(), msg, jetstream.WithMsgID(edge+"."+text)); err != nil {
		t.Fatal(err)
	}
}

// TestReportWaitsForItsClaim is the race that lost an acknowledged report
// in a 3-node cluster: the edge's claim is in the bucket, the home's
// index still shows the entry unclaimed, and the home's read of the claim
// fails (a node down) or lags (a replica that has not applied the claim)
// at the moment the report arrives. The home must hand the report back
// and deliver it once the bucket answers, never terminate it.
func TestReportWaitsForItsClaim(t *testing.T) {
	ns := natstest.Start(t)
	for _, tt := range []struct {
		name  string
		first func(stale jetstream.KeyValueEntry) (jetstream.KeyValueEntry, error)
	}{
		{"the read fails", func(jetstream.KeyValueEntry) (jetstream.KeyValueEntry, error) {
			return nil, context.DeadlineExceeded
		}},
		{"the read lags", func(stale jetstream.KeyValueEntry) (jetstream.KeyValueEntry, error) { return stale, nil }},
		{"the replica has no entry yet", func(jetstream.KeyValueEntry) (jetstream.KeyValueEntry, error) {
			return nil, jetstream.ErrKeyNotFound
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := startBareHome(t, ns)
			path := "/root/" + strings.ReplaceAll(tt.name, " ", "-")
			tok := b.open(t, path)
			key := tokenKey(sha256.Sum256([]byte(tok)))
			stale, err := b.h.l.kv.Get(t.Context(), key) // the entry as created: unclaimed
			if err != nil {
				t.Fatal(err)
			}
			edge, err := NewEdge(t.Context(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Name: "e1"})
			if err != nil {
				t.Fatal(err)
			}
			defer edge.Close()
			if _, err := edge.Claim(tok); err != nil {
				t.Fatal(err)
			}
			if err := edge.Mailbox().Post(diag.ParentMessage{From: path, Level: diag.Warning, Message: "acknowledged", At: time.Now()}); err != nil {
				t.Fatal(err) // the child would have its reply now
			}
			var reads atomic.Int32
			real := b.h.read
			b.h.read = func(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
				if reads.Add(1) == 1 {
					return tt.first(stale)
				}
				return real(ctx, key)
			}
			if !b.next(t, 5*time.Second) {
				t.Fatal("no message from the stream")
			}
			if st := b.h.Stats(); st.Refused != 0 || st.Waited != 1 || st.Delivered != 0 {
				t.Fatalf("after the first delivery: %+v, want it waiting (Waited 1), not refused\n%s", st, b.log)
			}
			if !b.next(t, 5*time.Second) {
				t.Fatalf("the report did not come again: terminated?\n%s", b.log)
			}
			if st := b.h.Stats(); st.Delivered != 1 || st.Refused != 0 {
				t.Fatalf("after the redelivery: %+v, want it delivered\n%s", st, b.log)
			}
			msgs, err := b.store.Read("/root", 10)
			if err != nil || len(msgs) != 1 || msgs[0].From != path {
				t.Fatalf("mailbox: %+v %v", msgs, err)
			}
			if !strings.Contains(b.log.String(), "thread="+path) {
				t.Errorf("the wait's log line does not name the thread:\n%s", b.log)
			}
		})
	}
}

// TestHomeTermsOnlyOnProof: against a real bucket, a report is refused
// (Term, counted, logged with the thread and the reason) only when the
// bucket's answer proves it can never be placed; what a later answer may
// place waits.
func TestHomeTermsOnlyOnProof(t *testing.T) {
	ns := natstest.Start(t)
	b := startBareHome(t, ns)
	kv := b.h.l.kv
	ctx := t.Context()
	claimAs := func(name string) func(*testing.T, string) {
		return func(t *testing.T, tok string) {
			if _, _, err := claim(ctx, kv, name, tok, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	setClosed := func(t *testing.T, tok string) {
		if err := b.h.setClosed(sha256.Sum256([]byte(tok))); err != nil {
			t.Fatal(err)
		}
	}
	for i, tt := range []struct {
		name    string
		prepare func(*testing.T, string)
		path    string // the report's path, "" for the token's own
		want    verdict
		reason  string
	}{
		{"claimed by this edge", claimAs("e1"), "", place, ""},
		{"claimed by this edge, then closed", func(t *testing.T, tok string) { claimAs("e1")(t, tok); setClosed(t, tok) }, "", place, ""},
		{"claimed by another edge", claimAs("e2"), "", refuse, "claimed by e2"},
		{"claimed by the home", claimAs(HomeName), "", refuse, "claimed by home"},
		{"for another thread", claimAs("e1"), "/root/elsewhere", refuse, "is for thread"},
		{"closed before any claim", setClosed, "", refuse, "closed before any edge claimed it"},
		{"open, not claimed yet", func(*testing.T, string) {}, "", wait, "does not show the claim yet"},
		{"deleted", func(t *testing.T, tok string) {
			if err := kv.Delete(ctx, tokenKey(sha256.Sum256([]byte(tok)))); err != nil {
				t.Fatal(err)
			}
		}, "", wait, "no entry for the token yet"}, // Get cannot tell deleted from missing
		{"unreadable", func(t *testing.T, tok string) {
			if _, err := kv.Put(ctx, tokenKey(sha256.Sum256([]byte(tok))), []byte(`{"v":1`)); err != nil {
				t.Fatal(err)
			}
		}, "", refuse, "unreadable"},
		{"no entry at all", nil, "", wait, "no entry for the token yet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := "/root/p" + string(rune('a'+i))
			tok := service.NewToken()
			if tt.prepare != nil {
				tok = b.open(t, path)
				tt.prepare(t, tok)
			}
			reportPath := path
			if tt.path != "" {
				reportPath = tt.path
			}
			before := b.h.Stats()
			b.log.Reset()
			publish(t, ns, "e1", tok, reportPath, tt.name)
			if !b.next(t, 5*time.Second) {
				t.Fatal("no message from the stream")
			}
			st := b.h.Stats()
			got := map[verdict]uint64{place: st.Delivered - before.Delivered, wait: st.Waited - before.Waited, refuse: st.Refused - before.Refused}
			if got[tt.want] != 1 || got[place]+got[wait]+got[refuse] != 1 {
				t.Fatalf("%v: want one %v\n%s", got, tt.want, b.log)
			}
			log := b.log.String()
			if tt.want != place && (!strings.Contains(log, tt.reason) || !strings.Contains(log, "thread="+reportPath)) {
				t.Errorf("log %q does not give the reason %q and the thread %s", log, tt.reason, reportPath)
			}
			if tt.want == wait { // settle it for the next case
				batch, err := b.h.cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for msg := range batch.Messages() {
					_ = msg.Term()
				}
			}
		})
	}
}

// TestJudge covers judge's rule on each state an entry can be in.
func TestJudge(t *testing.T) {
	open := entry{Path: "/root/a", Open: true}
	mine, other := open, open
	mine.Edge, other.Edge = "e1", "e2"
	closedMine, closedNone := mine, open
	closedMine.Open, closedNone.Open = false, false
	for _, tt := range []struct {
		e    entry
		path string
		want verdict
	}{
		{mine, "/root/a", place},
		{closedMine, "/root/a", place}, // acknowledged before the revocation reached the edge
		{other, "/root/a", refuse},
		{mine, "/root/b", refuse},
		{open, "/root/b", refuse},
		{closedNone, "/root/a", refuse},
		{open, "/root/a", wait},
	} {
		if got, why := judge(tt.e, "e1", tt.path); got != tt.want || (got != place) != (why != "") {
			t.Errorf("judge(%+v, e1, %s) = %v %q, want %v", tt.e, tt.path, got, why, tt.want)
		}
	}
}

// TestNakDelay: the backoff starts at 250 ms, doubles, and stays at 15 s;
// the deliveries that may find no entry span more than a minute.
func TestNakDelay(t *testing.T) {
	want := []time.Duration{250 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
		2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second, 15 * time.Second}
	for n, w := range want {
		if got := nakDelay(uint64(n)); got != w {
			t.Errorf("nakDelay(%d) = %v, want %v", n, got, w)
		}
	}
	if got := nakDelay(1 << 63); got != 15*time.Second {
		t.Errorf("nakDelay(2^63) = %v", got)
	}
	var total time.Duration
	for n := uint64(1); n < maxNotFound; n++ {
		total += nakDelay(n)
	}
	if total < time.Minute {
		t.Errorf("the deliveries before a missing entry is refused span %v, want over a minute", total)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
