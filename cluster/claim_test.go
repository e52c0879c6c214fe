package cluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// countingKV is a real bucket that counts its reads.
type countingKV struct {
	jetstream.KeyValue
	gets atomic.Int64
}

func (c *countingKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	c.gets.Add(1)
	return c.KeyValue.Get(ctx, key)
}

// seenNow is the token's entry as a watch would bring it now.
func seenNow(t *testing.T, kv jetstream.KeyValue, tok string) *seenEntry {
	t.Helper()
	kve, err := kv.Get(t.Context(), tokenKey(sha256.Sum256([]byte(tok))))
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeEntry(kve.Value())
	if err != nil {
		t.Fatal(err)
	}
	return &seenEntry{e, kve.Revision()}
}

// TestClaimFromTheWatch: a claim on the entry as the watch brought it
// writes without reading first when the entry is still that revision, and
// when it is not (closed, or claimed, since), the compare-and-set fails
// and the bucket's answer decides, as a claim with no entry seen would.
func TestClaimFromTheWatch(t *testing.T) {
	ns := natstest.Start(t)
	b := startBareHome(t, ns)
	kv := &countingKV{KeyValue: b.h.l.kv}
	ctx := t.Context()
	for _, tt := range []struct {
		name     string
		meantime func(t *testing.T, tok string) // between the watch's entry and the claim
		stale    func(s *seenEntry)             // what the watch brought, changed
		want     error
		gets     int64
	}{
		{"current", nil, nil, nil, 0},
		{"closed since", func(t *testing.T, tok string) {
			if err := b.h.setClosed(sha256.Sum256([]byte(tok))); err != nil {
				t.Fatal(err)
			}
		}, nil, service.ErrTokenRevoked, 1},
		{"claimed by another edge since", func(t *testing.T, tok string) {
			if _, _, err := claim(ctx, b.h.l.kv, "e2", tok, nil); err != nil {
				t.Fatal(err)
			}
		}, nil, service.ErrTokenClaimed, 1},
		// Only an open, unclaimed entry stands in for the read: a claim of
		// this edge's that the watch showed may have been closed since, and
		// no write would check it.
		{"seen as this edge's claim", func(t *testing.T, tok string) {
			if _, _, err := claim(ctx, b.h.l.kv, "e1", tok, nil); err != nil {
				t.Fatal(err)
			}
			if err := b.h.setClosed(sha256.Sum256([]byte(tok))); err != nil {
				t.Fatal(err)
			}
		}, func(s *seenEntry) { s.e.Edge = "e1" }, service.ErrTokenRevoked, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := b.open(t, "/root/"+tt.name[:3])
			seen := seenNow(t, kv.KeyValue, tok)
			if tt.stale != nil {
				tt.stale(seen)
			}
			if tt.meantime != nil {
				tt.meantime(t, tok)
			}
			kv.gets.Store(0)
			e, rev, err := claim(ctx, kv, "e1", tok, seen)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("claim: %v, want %v", err, tt.want)
			}
			if n := kv.gets.Load(); n != tt.gets {
				t.Errorf("%d reads of the bucket, want %d", n, tt.gets)
			}
			if err != nil {
				return
			}
			now := seenNow(t, kv.KeyValue, tok)
			if e.Edge != "e1" || now.e.Edge != "e1" || now.rev != rev || rev <= seen.rev {
				t.Errorf("claimed %+v at %d; the bucket has %+v at %d (seen at %d)", e, rev, now.e, now.rev, seen.rev)
			}
		})
	}
}

// TestEdgeClaimsWhatItWatched: an edge's hello on a token whose entry its
// watch already brought claims it with the write alone.
func TestEdgeClaimsWhatItWatched(t *testing.T) {
	ns := natstest.Start(t)
	home := startHome(t, ns)
	e, err := NewEdge(context.Background(), Config{URL: ns.URL, MonitorURL: ns.MonitorURL, Name: "e1", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	kv := &countingKV{KeyValue: e.l.kv}
	e.l.kv = kv
	srv := service.New(service.Config{Mailbox: e.Mailbox(), Directory: e, Edge: true, Mode: relay.ModePrint})
	if err := e.Start(srv); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(testutil.ShortTempDir(t), "edge.sock")
	serveOn(t, srv, sock)
	t.Cleanup(func() { shutdown(srv); e.Close() })

	rt, err := home.host.Open("/root/w", client.OpenOptions{Parent: "/root"})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(rt.Token))
	testutil.Eventually(t, 10*time.Second, "the edge's watch brings the entry", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		_, ok := e.unclaimed[h]
		return ok
	})
	c, err := dialRaw(t, sock, rt.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.report("warning", "claimed with one write", ""); err != nil {
		t.Fatal(err)
	}
	if n := kv.gets.Load(); n != 0 {
		t.Errorf("the claim read the bucket %d times, want 0", n)
	}
	e.mu.Lock()
	_, still := e.unclaimed[h]
	_, mine := e.claims[h]
	e.mu.Unlock()
	if still || !mine {
		t.Errorf("after the claim: unclaimed %v, claimed %v", still, mine)
	}
}
