package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// Edge is the cluster side of serve --join: a host of children with no
// parent of its own. It is the service.Directory of the edge's server (it
// claims the tokens its children bring and revokes them when the home
// does) and the mailbox of its relay.Manager: each report the edge's gate
// admits is published to the stream, and the child's reply waits for the
// stream's acknowledgement (docs/cluster.md).
type Edge struct {
	cfg  Config
	log  *slog.Logger
	l    *link
	name string
	boot string
	seq  atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	claims map[[32]byte]claimed // token hash → this edge's claim
	byPath map[string][32]byte  // path → its newest claim
	sent   map[[32]byte]relay.RemoteCounts
	gone   map[[32]byte]bool // revoked claims: forgotten after their last counts
	// unclaimed holds the entries open and not claimed yet, as the watch
	// last brought them: a hello on one of them claims it with one write
	// and no read (claim.go).
	unclaimed map[[32]byte]seenEntry

	// CountsEvery is how often the edge publishes the counts that changed;
	// set before Start.
	CountsEvery time.Duration

	published, failed atomic.Uint64
}

// NewEdge connects to the cluster as the edge named cfg.Name and checks
// that the home made the stream and the bucket and that every
// acknowledged write is on disk.
func NewEdge(ctx context.Context, c Config) (*Edge, error) {
	if !ValidName(c.Name) {
		return nil, fmt.Errorf("cluster: edge name %q: 1 to 64 of [A-Za-z0-9_-]", c.Name)
	}
	if c.Name == HomeName {
		return nil, fmt.Errorf("cluster: %q names the home; give the edge another name", HomeName)
	}
	l, err := dial(ctx, &c, c.Name, false)
	if err != nil {
		return nil, err
	}
	e := &Edge{cfg: c, log: c.logger(), l: l, name: c.Name, boot: newBoot(),
		claims: make(map[[32]byte]claimed), byPath: make(map[string][32]byte), sent: make(map[[32]byte]relay.RemoteCounts), gone: make(map[[32]byte]bool),
		unclaimed:   make(map[[32]byte]seenEntry),
		CountsEvery: time.Second}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e, nil
}

// claimed is one of the edge's claims: the thread, and the entry's revision
// that holds the claim.
type claimed struct {
	path string
	rev  uint64
}

// revokedBy reports whether a change the watch brought, revision rev of the
// claim's entry (ok false: deleted or unreadable), ends the claim held by
// name. A revision up to the claim's own is older news (the entry as the
// home wrote it before the claim, which a watch may bring after the claim's
// compare-and-set): it cannot revoke.
func (c claimed) revokedBy(rev uint64, en entry, ok bool, name string) bool {
	return rev > c.rev && (!ok || !en.Open || en.Edge != name)
}

// Name is the edge's name.
func (e *Edge) Name() string { return e.name }

// Start watches the bucket, revoking srv's tokens that the home closed,
// and publishes the counts of srv's threads. It returns once the bucket's
// current entries are known.
func (e *Edge) Start(srv *service.Server) error {
	ready := make(chan error, 1)
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		watchBucket(e.ctx, e.l.kv, e.log, ready, func(hash [32]byte, rev uint64, en entry, ok bool) {
			e.mu.Lock()
			c, mine := e.claims[hash]
			if ok && en.Open && en.Edge == "" {
				if old, had := e.unclaimed[hash]; !had || rev > old.rev {
					e.unclaimed[hash] = seenEntry{en, rev}
				}
			} else {
				delete(e.unclaimed, hash)
			}
			e.mu.Unlock()
			if mine && c.revokedBy(rev, en, ok, e.name) {
				if srv.RevokeToken(hash) {
					e.log.Info("cluster: token revoked by the home", "thread", en.Path)
				}
				e.mu.Lock()
				e.gone[hash] = true
				e.mu.Unlock()
			}
		})
	}()
	go func() { defer e.wg.Done(); e.countsLoop(srv.Manager()) }()
	select {
	case err := <-ready:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("cluster: the bucket's entries did not arrive within 30 s")
	}
}

// Close publishes the last counts, stops, and closes the connection.
func (e *Edge) Close() {
	e.cancel()
	e.wg.Wait()
	e.l.close()
}

var _ service.Directory = (*Edge)(nil)

// Opened refuses: an edge issues no tokens (the server refuses
// runtime.open before it gets here).
func (e *Edge) Opened(string, service.DirectoryEntry) error {
	return errors.New("cluster: an edge issues no tokens")
}

// Revoked is a no-op: a token the edge's server revoked (its bound
// process exited, a newer claim of its path) stays the home's to close.
func (e *Edge) Revoked([32]byte) {}

// Closed is false: an edge knows no thread of its own.
func (e *Edge) Closed(string) bool { return false }

// Claim claims token for this edge with a compare-and-set on the bucket,
// on the entry as the watch brought it when it did.
func (e *Edge) Claim(token string) (service.DirectoryEntry, error) {
	ctx, cancel := context.WithTimeout(e.ctx, DefaultPublishWait)
	defer cancel()
	h := sha256.Sum256([]byte(token))
	e.mu.Lock()
	seen, ok := e.unclaimed[h]
	e.mu.Unlock()
	var known *seenEntry
	if ok {
		known = &seen
	}
	en, rev, err := claim(ctx, e.l.kv, e.name, token, known)
	if err != nil {
		return service.DirectoryEntry{}, err
	}
	e.mu.Lock()
	delete(e.unclaimed, h)
	e.claims[h] = claimed{en.Path, rev}
	e.byPath[en.Path] = h
	e.mu.Unlock()
	return en.directory(), nil
}

// Mailbox is the edge's relay mailbox: Post publishes; there is nothing to
// read at an edge.
func (e *Edge) Mailbox() service.Mailbox { return edgeMailbox{e} }

type edgeMailbox struct{ e *Edge }

var errNoMailbox = errors.New("cluster: an edge keeps no mailbox: read it on the home")

func (edgeMailbox) ReadPage(string, int) (mailbox.Page, error) { return mailbox.Page{}, errNoMailbox }
func (edgeMailbox) Ack(string, []uint64) (int, error)          { return 0, errNoMailbox }

// Post publishes one admitted report with a Nats-Msg-Id unique to it and
// returns once the stream acknowledged it: stored on the stream's disk.
func (m edgeMailbox) Post(pm diag.ParentMessage) error {
	e := m.e
	e.mu.Lock()
	h, ok := e.byPath[pm.From]
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("cluster: thread %s has no claim at this edge", pm.From)
	}
	body := encodeMsg(reportMsg{V: msgVersion, Token: hex.EncodeToString(h[:]), Path: pm.From,
		Level: string(pm.Level), Source: pm.Source, Message: pm.Message, At: pm.At.UTC()})
	id := e.name + "." + e.boot + "." + strconv.FormatUint(e.seq.Add(1), 10)
	if err := e.publish(ReportSubject, body, id); err != nil {
		e.failed.Add(1)
		return err
	}
	e.published.Add(1)
	return nil
}

func (e *Edge) publish(prefix string, body []byte, id string) error {
	ctx, cancel := context.WithTimeout(e.ctx, DefaultPublishWait)
	defer cancel()
	msg := &nats.Msg{Subject: prefix + "." + e.name, Data: body}
	_, err := e.l.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id), jetstream.WithExpectStream(StreamName))
	if err != nil {
		return fmt.Errorf("cluster: publish: %w", err)
	}
	return nil
}

// countsLoop publishes, every CountsEvery, the drops and redactions of each
// claimed thread that changed since the last publication, and once more
// when the edge closes.
func (e *Edge) countsLoop(m *relay.Manager) {
	t := time.NewTicker(e.CountsEvery)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		claims := make(map[[32]byte]string, len(e.byPath))
		for p, h := range e.byPath {
			claims[h] = p
		}
		e.mu.Unlock()
		for h, path := range claims {
			st, ok := m.Thread(path) // the summary: no copy of its diagnostics
			if !ok {
				continue
			}
			c := relay.RemoteCounts{Dropped: st.Dropped, Redacted: st.Redacted}
			e.mu.Lock()
			last, had := e.sent[h]
			e.mu.Unlock()
			if had && last.Dropped == c.Dropped && sameCounts(last.Redacted, c.Redacted) {
				continue
			}
			if c.Dropped.Total() == 0 && len(c.Redacted) == 0 {
				continue
			}
			body := encodeMsg(countsMsg{V: msgVersion, Token: hex.EncodeToString(h[:]), Path: path, Boot: e.boot,
				Dropped: c.Dropped, Redacted: c.Redacted})
			id := e.name + "." + e.boot + ".c" + strconv.FormatUint(e.seq.Add(1), 10)
			if err := e.publish(CountsSubject, body, id); err != nil {
				e.log.Warn("cluster: counts not published; next tick", "err", err)
				continue
			}
			e.mu.Lock()
			e.sent[h] = c
			e.mu.Unlock()
		}
		e.forgetGone()
	}
}

// forgetGone forgets the revoked claims, whose counts were just published.
func (e *Edge) forgetGone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for h := range e.gone {
		if c, ok := e.claims[h]; ok && e.byPath[c.path] == h {
			delete(e.byPath, c.path)
		}
		delete(e.claims, h)
		delete(e.sent, h)
	}
	clear(e.gone)
}

func sameCounts(a, b diag.Redacted) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
