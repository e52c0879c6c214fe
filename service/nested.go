package service

import (
	"strings"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// This file is the rule of nested children (docs/protocol.md, "Nested
// children"): which host methods a child connection may call, for which
// threads, and what becomes of the runtimes a child opened when its own
// generation ends.

// nestedScope says which threads a child connection may name in a host
// method: in params member field, a path strictly below the child's own
// thread (below), or exactly its own thread (its mailbox).
type nestedScope struct {
	field string
	below bool
}

var (
	belowOwnThread = &nestedScope{field: "path", below: true}
	ownMailbox     = &nestedScope{field: "recipient", below: false}
)

// nestedAllowed checks that a child connection's call of a host method
// names a thread its scope allows. The field is decoded exactly as the
// method decodes it (frames are strict: one member of that name, matched
// exactly), so the check and the call can never see different paths. A
// bad or missing field gets the method's own -32602.
func (c *conn) nestedAllowed(method string, sc *nestedScope, raw []byte) *wire.Error {
	var e *wire.Error
	var target string
	if sc.field == "path" {
		var p wire.PathParams
		e, target = jsonframe.DecodeParams(raw, &p), p.Path
	} else {
		var p wire.ReadParams // mailbox.read's and mailbox.ack's recipient
		e, target = jsonframe.DecodeParams(raw, &p), p.Recipient
	}
	if e != nil {
		return e
	}
	if e := pathParam(sc.field, target); e != nil {
		return e
	}
	own := c.child.path
	switch {
	case sc.below && !strings.HasPrefix(target, own+"/"):
		return wire.Errorf(wire.CodeForbidden, "%s is a host method; a child may call it only for threads below its own thread %s", method, own)
	case !sc.below && target != own:
		return wire.Errorf(wire.CodeForbidden, "%s is a host method; a child may call it only for its own thread %s", method, own)
	}
	return nil
}

// closeOpenedBy closes every runtime that b's generation opened and that
// is still the live one of its path, and in turn what those opened: a
// child's children end with the child's generation (closed or reopened),
// as a process's children are its own business. The host may still read
// their status and mailboxes. Called with openMu held.
func (s *Server) closeOpenedBy(b *binding) {
	for _, nb := range s.tokens.takeOpened(b) {
		if s.tokens.revokeIfLive(nb) {
			nb.rt.Close()
			s.events.closed(nb.rt)
			s.closeOpenedBy(nb)
		}
	}
}

// opener is the binding whose generation a runtime.open on c belongs to:
// the child's, or nil for the host.
func (c *conn) opener() *binding {
	if c.isChild() {
		return c.child
	}
	return nil
}
