package service

import (
	"time"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// This file maps the library's types onto the wire's shapes, which live in
// package internal/wire with the protocol's JSON tags (diag.Dropped, which
// wire.Dropped aliases, is the one library type that carries them). The
// relay, mailbox and capability types carry none, so renaming one of their
// fields cannot change the protocol. The contract is docs/protocol.md.

// wireReason names a drop as a dropped event's reason, the names of
// wire.Dropped's members: the wire's, not diag's String.
func wireReason(v diag.Verdict) string {
	switch v {
	case diag.DropDuplicate:
		return wire.ReasonDuplicate
	case diag.DropRate:
		return wire.ReasonRate
	case diag.DropCap:
		return wire.ReasonCap
	case diag.DropInvalid:
		return wire.ReasonInvalid
	}
	return "unknown"
}

// wireRedacted is never nil: the member reads {} when nothing was redacted.
func wireRedacted(r diag.Redacted) wire.Redacted {
	if r == nil {
		return wire.Redacted{}
	}
	return r
}

func wireThreads(ts []relay.ThreadSummary) wire.Threads {
	r := wire.Threads{Threads: make([]wire.ThreadInfo, len(ts))}
	for i, t := range ts {
		r.Threads[i] = wire.ThreadInfo{Path: t.Path, Parent: t.Parent, Owner: t.Owner, Open: t.Open,
			Generation: t.Generation, Diagnostics: t.Diagnostics, Dropped: t.Dropped,
			Redacted: wireRedacted(t.Redacted), Edge: t.Edge}
	}
	return r
}

// wirePeer is a thread's bound process and its exit time, as status and
// list show them: nil for none.
func wirePeer(info *peerInfo, exited time.Time) (*wire.Peer, *time.Time) {
	var p *wire.Peer
	if info != nil {
		p = &wire.Peer{PID: info.pid, UID: info.uid, Exe: info.exe}
	}
	if exited.IsZero() {
		return p, nil
	}
	return p, &exited
}

func wireStatus(s relay.Status) wire.Status {
	r := wire.Status{
		Path: s.Path, Parent: s.Parent, Owner: s.Owner, Open: s.Open, Generation: s.Generation,
		Diagnostics: make([]wire.Diagnostic, len(s.Diagnostics)),
		Dropped:     s.Dropped,
		Redacted:    wireRedacted(s.Redacted),
		Edge:        s.Edge,
	}
	for i, d := range s.Diagnostics {
		r.Diagnostics[i] = wire.Diagnostic{Level: string(d.Level), Source: d.Source, Message: d.Message, At: d.At}
	}
	return r
}

func wirePage(p mailbox.Page) wire.Page {
	es := p.Messages
	r := wire.Page{Messages: make([]wire.Message, len(es)), Damaged: p.Damaged}
	for i, e := range es {
		r.Messages[i] = wire.Message{ID: e.ID, Recipient: e.Recipient, From: e.From, Text: e.Text,
			Level: string(e.Level), Source: e.Source, Message: e.Message, At: e.At}
	}
	return r
}

func wireProbe(c capability.Capability) wire.Probe {
	return wire.Probe{Version: c.Version, Protocol: c.Protocol}
}

func wireNotify(n relay.Notification) wire.UINotify {
	return wire.UINotify{Thread: n.Thread, Message: n.Text, NotifyType: string(n.Level)}
}
