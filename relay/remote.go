package relay

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/ring"
	"github.com/diagrelay/diagrelay/threadpath"
)

// OnceMailbox is a Mailbox that stores a message at most once per id: the
// mailbox of a cluster's home (docs/cluster.md), where a report admitted
// at an edge may be delivered to the home more than once. PostOnce stores m
// and the id in one transaction and reports dup, storing nothing, when the
// id is already stored. seq orders ids for forgetting them (the stream
// sequence of the message that carried the report).
type OnceMailbox interface {
	Mailbox
	PostOnce(id string, seq uint64, m diag.ParentMessage) (dup bool, err error)
}

// ErrNotOnce is DeliverRemote's error when the Manager's mailbox is not an
// OnceMailbox.
var ErrNotOnce = errors.New("relay: the mailbox cannot store a remote report exactly once")

// RemoteReport is a report that a cluster edge's gate admitted for a thread
// of this Manager (docs/cluster.md). Its text was sanitized and redacted at
// the edge; DeliverRemote parses it again, so an edge cannot deliver what
// a local report could not.
type RemoteReport struct {
	ID  string // unique per report: the message's Nats-Msg-Id
	Seq uint64 // the stream sequence of the message (OnceMailbox.PostOnce)

	Path, Parent, Owner string // the thread, as the home opened it
	Edge                string // the edge that admitted it

	Level, Source, Message string
	At                     time.Time // the edge's clock at admission
}

// DeliverRemote delivers a report that an edge admitted: the parent
// message first, stored once per ID, and then, unless the ID was already
// stored (dup), the status entry and the notification, exactly as for a
// local report. The edge's gate already counted it, so it passes no gate
// here. A thread this Manager does not know (opened before the home
// restarted) gets a status record, closed, so its reports are seen.
func (m *Manager) DeliverRemote(r RemoteReport) (dup bool, err error) {
	mb, ok := m.mailbox.(OnceMailbox)
	if !ok {
		return false, ErrNotOnce
	}
	if err := threadpath.Validate(r.Path); err != nil {
		return false, err
	}
	payload := map[string]any{"level": r.Level, "message": r.Message}
	if r.Source != "" {
		payload["source"] = r.Source
	}
	rep, found, err := diag.ParseWith(payload, m.parseOptions())
	if err != nil {
		return false, err
	}
	t, err := m.remoteThread(r)
	if err != nil {
		return false, err
	}
	t.mu.Lock() // Open sets the owner under it
	recipient := threadpath.Recipient(t.parent, t.owner)
	t.mu.Unlock()
	msg := parentMessage(recipient, t.path, rep, r.At)
	postErr := m.callSink("mailbox", func() error {
		dup, err = mb.PostOnce(r.ID, r.Seq, msg)
		return err
	})
	if postErr != nil || dup {
		return dup, postErr
	}
	t.mu.Lock()
	t.deliveredLocked(rep, found, r.At) // found: none from an honest edge, which redacted already
	t.edge = r.Edge
	t.mu.Unlock()
	m.observe(Observation{Kind: ObservedDelivery, Thread: t.path, At: r.At, Report: rep, Redacted: found, Edge: r.Edge})
	m.offerNotification(t.path, rep, m.now())
	return false, nil
}

// remoteThread returns r's thread, making a closed record for a path the
// Manager has not opened.
func (m *Manager) remoteThread(r RemoteReport) (*thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	t := m.threads[r.Path]
	if t != nil {
		return t, nil
	}
	lex := threadpath.LexicalParent(r.Path)
	if r.Parent != lex {
		return nil, fmt.Errorf("%w %q: parent %q is not its lexical parent %q", threadpath.ErrInvalid, r.Path, threadpath.Clip(r.Parent), lex)
	}
	owner := r.Owner
	if lex != "" {
		owner = ""
	} else if err := threadpath.Validate(owner); err != nil {
		return nil, fmt.Errorf("owner: %w", err)
	}
	t = &thread{path: r.Path, parent: lex, owner: owner, diags: ring.New[Diagnostic](MaxStatusDiagnostics)}
	m.threads[r.Path] = t
	return t, nil
}

// RemoteCounts is what an edge's gates dropped of a thread's reports and
// what its redaction removed from the delivered ones, since the edge's
// process started.
type RemoteCounts struct {
	Dropped  diag.Dropped
	Redacted diag.Redacted
}

// SetRemoteCounts records an edge's running totals for a thread since the
// edge's process started (boot): they replace the last totals from the
// same edge and boot. Status adds every edge's totals to the local ones,
// so the home's status shows an edge's drops and redactions as its own
// (docs/cluster.md). A thread the Manager does not know is ignored.
func (m *Manager) SetRemoteCounts(path, edge, boot string, c RemoteCounts) {
	t := m.lookup(path)
	if t == nil {
		return
	}
	c.Redacted = plusRedacted(nil, c.Redacted) // a copy, bounded
	t.mu.Lock()
	defer t.mu.Unlock()
	key := [2]string{edge, boot}
	if t.remote == nil {
		t.remote = make(map[[2]string]RemoteCounts)
	}
	if _, ok := t.remote[key]; !ok && len(t.remote) >= maxRemoteSources {
		// Fold the oldest totals into a fixed sum: bounded memory, and
		// the folded sources' later totals add rather than replace.
		t.remoteFolded = t.remoteSumLocked()
		clear(t.remote)
	}
	t.remote[key] = c
	t.edge = edge
}

// maxRemoteSources bounds the (edge, boot) totals kept per thread.
const maxRemoteSources = 64

func (t *thread) remoteSumLocked() RemoteCounts {
	s := RemoteCounts{Dropped: t.remoteFolded.Dropped, Redacted: t.remoteFolded.Redacted}
	for _, c := range t.remote {
		s.Dropped = s.Dropped.Plus(c.Dropped)
		s.Redacted = plusRedacted(s.Redacted, c.Redacted)
	}
	return s
}

// plusRedacted is r with e's counts added (nil when both are empty); a
// count below 1, from a confused edge, is not added. Neither is changed.
func plusRedacted(r, e diag.Redacted) diag.Redacted {
	if len(e) == 0 {
		if len(r) == 0 {
			return nil
		}
		return maps.Clone(r)
	}
	out := make(diag.Redacted, len(r)+len(e))
	for k, v := range r {
		out[k] += v
	}
	for k, v := range e {
		if _, ok := out[k]; v > 0 && (ok || len(out) < maxRedactedRules) {
			out[k] += v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// maxRedactedRules bounds the rule ids an edge may add to a thread's
// counts (the generated rules number fewer).
const maxRedactedRules = 512
