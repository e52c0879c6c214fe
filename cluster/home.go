package cluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// Home is the cluster side of serve --cluster: the parent's host. It is the
// service.Directory of the home's server (it publishes the tokens it
// issues and revokes them), and it consumes the reports that edges
// admitted, delivering each through the home's relay.Manager exactly once
// (docs/cluster.md).
type Home struct {
	cfg  Config
	log  *slog.Logger
	l    *link
	cons jetstream.Consumer
	read entryRead // the bucket's Get (place.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	entries map[[32]byte]entry           // the bucket as last seen (watch.go)
	byPath  map[string]map[[32]byte]bool // the keys of each path
	pending map[[32]byte]struct{}        // tokens to set closed
	wake    chan struct{}                // 1 slot: pending grew

	// PruneEvery is how often the home forgets the ids of reports the
	// stream will not deliver again, and purges them from the stream; set
	// before Start.
	PruneEvery time.Duration
	purged     uint64 // the stream is purged through this sequence (pruneLoop's own)

	stats homeStats
}

type homeStats struct {
	delivered, duplicates, refused, retried, waited, counts, revoked, pruned atomic.Uint64
}

// HomeStats counts what the home did with the stream's messages.
type HomeStats struct {
	Delivered  uint64 // reports delivered (stored, shown)
	Duplicates uint64 // redeliveries of a report already stored: acknowledged, not delivered again
	Refused    uint64 // messages that failed a check (docs/cluster.md): terminated, not delivered
	Retried    uint64 // messages handed back to the stream after a mailbox failure
	Waited     uint64 // messages handed back to the stream because the bucket had not answered for their claim (place.go)
	Counts     uint64 // edges' counts applied
	Revoked    uint64 // tokens set closed in the bucket
	Pruned     uint64 // report ids forgotten below the consumer's acknowledgement floor
}

// Stats returns the home's counters.
func (h *Home) Stats() HomeStats {
	s := &h.stats
	return HomeStats{s.delivered.Load(), s.duplicates.Load(), s.refused.Load(), s.retried.Load(), s.waited.Load(), s.counts.Load(), s.revoked.Load(), s.pruned.Load()}
}

// NewHome connects to the cluster, creating the stream, the bucket and the
// home's consumer if they are missing, and checks that every acknowledged
// write is on disk.
func NewHome(ctx context.Context, c Config) (*Home, error) {
	l, err := dial(ctx, &c, HomeName, true)
	if err != nil {
		return nil, err
	}
	cons, err := settle(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
		return l.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       ConsumerName,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       DefaultAckWait,
			MaxAckPending: DefaultMaxAckPending,
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
	})
	if err != nil {
		l.close()
		return nil, fmt.Errorf("cluster: consumer %s: %w", ConsumerName, err)
	}
	h := &Home{cfg: c, log: c.logger(), l: l, cons: cons, read: l.kv.Get,
		entries: make(map[[32]byte]entry), byPath: make(map[string]map[[32]byte]bool),
		pending: make(map[[32]byte]struct{}), wake: make(chan struct{}, 1), PruneEvery: 10 * time.Second}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

// Forgetter forgets stored report ids (mailbox.Store.ForgetOnceThrough).
type Forgetter interface {
	ForgetOnceThrough(seq uint64) (int, error)
}

// Start watches the bucket and starts delivering the stream's reports
// through m, whose mailbox must be a relay.OnceMailbox; f forgets the ids
// the stream no longer redelivers. It returns once the bucket's current
// entries are known.
func (h *Home) Start(m *relay.Manager, f Forgetter) error {
	ready := make(chan error, 1)
	h.wg.Add(3)
	go func() { defer h.wg.Done(); h.watch(ready) }()
	go func() { defer h.wg.Done(); h.revokeLoop() }()
	go func() { defer h.wg.Done(); h.consume(m, f) }()
	select {
	case err := <-ready:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("cluster: the bucket's entries did not arrive within 30 s")
	}
}

// Close stops consuming (reports fetched and not yet acknowledged come again
// after the ack wait) and closes the connection.
func (h *Home) Close() {
	h.cancel()
	h.wg.Wait()
	h.l.close()
}

var _ service.Directory = (*Home)(nil)

// Opened writes the token's entry, open and unclaimed, before runtime.open
// answers, so that an edge finds it at the child's first hello; tokens of
// the path from earlier processes of the home are set closed.
func (h *Home) Opened(token string, d service.DirectoryEntry) error {
	hash := sha256.Sum256([]byte(token))
	e := entry{V: entryVersion, Path: d.Path, Parent: d.Parent, Owner: d.Owner, Generation: d.Generation,
		Open: true, Bind: d.Bind, OpenedAt: h.cfg.now().UTC()}
	ctx, cancel := context.WithTimeout(h.ctx, DefaultPublishWait)
	defer cancel()
	if _, err := h.l.kv.Create(ctx, tokenKey(hash), e.encode()); err != nil {
		return fmt.Errorf("cluster: open %s: %w", d.Path, err)
	}
	h.mu.Lock()
	h.indexLocked(hash, e)
	for other := range h.byPath[d.Path] {
		if other != hash {
			h.pending[other] = struct{}{}
		}
	}
	h.mu.Unlock()
	h.poke()
	return nil
}

// Revoked queues the token to be set closed in the bucket.
func (h *Home) Revoked(hash [32]byte) {
	h.mu.Lock()
	h.pending[hash] = struct{}{}
	h.mu.Unlock()
	h.poke()
}

// Closed queues every token of path to be set closed.
func (h *Home) Closed(path string) bool {
	h.mu.Lock()
	keys := h.byPath[path]
	for k := range keys {
		h.pending[k] = struct{}{}
	}
	h.mu.Unlock()
	h.poke()
	return len(keys) > 0
}

// Claim claims, at its first hello, a token the home issued to a local
// child, so that no edge serves it too.
func (h *Home) Claim(token string) (service.DirectoryEntry, error) {
	ctx, cancel := context.WithTimeout(h.ctx, DefaultPublishWait)
	defer cancel()
	e, _, err := claim(ctx, h.l.kv, HomeName, token, nil)
	return e.directory(), err
}

func (h *Home) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// revokeLoop sets the queued tokens closed, one compare-and-set each, so a
// claim racing the revocation cannot undo it.
func (h *Home) revokeLoop() {
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.wake:
		}
		h.mu.Lock()
		batch := make([][32]byte, 0, len(h.pending))
		for k := range h.pending {
			batch = append(batch, k)
		}
		clear(h.pending)
		h.mu.Unlock()
		for _, k := range batch {
			if err := h.setClosed(k); err != nil && h.ctx.Err() == nil {
				h.log.Warn("cluster: revocation failed; retrying", "err", err)
				h.mu.Lock()
				h.pending[k] = struct{}{}
				h.mu.Unlock()
				time.AfterFunc(250*time.Millisecond, h.poke)
			}
		}
	}
}

func (h *Home) setClosed(hash [32]byte) error {
	ctx, cancel := context.WithTimeout(h.ctx, DefaultPublishWait)
	defer cancel()
	key := tokenKey(hash)
	unreadable, wrote := false, false
	_, _, err := casEntry(ctx, h.l.kv, key, nil, func(e *entry, readErr error) (bool, error) {
		unreadable = readErr != nil && readErr != errNoEntry
		wrote = readErr == nil && e.Open
		e.Open = false
		return wrote, nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("cluster: revocation: %w", err)
	case unreadable: // not ours to read: remove it
		return h.l.kv.Delete(ctx, key)
	case wrote:
		h.stats.revoked.Add(1)
	}
	return nil
}
