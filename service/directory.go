package service

import (
	"crypto/sha256"
	"errors"

	"github.com/diagrelay/diagrelay/internal/peercred"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
)

// Directory is a cluster's registry of child tokens as the server uses it
// (package cluster, docs/cluster.md). A home's server publishes each token
// it issues and revokes; an edge's server issues none and resolves the
// tokens its children bring. Each token is claimed by one server, at the
// first hello that brings it.
type Directory interface {
	// Opened publishes a token runtime.open just issued; an error fails
	// the runtime.open (the token is revoked again). Called with no lock
	// of the server's held but runtime.open's own.
	Opened(token string, e DirectoryEntry) error
	// Revoked says the token with this SHA-256 hash was revoked. It is
	// called with the token table's lock held, so it must not block: it
	// queues the work.
	Revoked(hash [32]byte)
	// Closed says runtime.close closed path, or that runtime.open opened
	// it anew: every token of the path that an earlier process of the home
	// issued is revoked too. It reports whether the directory knew any, and
	// must not block.
	Closed(path string) bool
	// Claim claims token for this server, or returns the claim it already
	// holds: ErrTokenUnknown, ErrTokenClaimed or ErrTokenRevoked when it
	// cannot. Called at a child's first hello on a token, no lock held.
	Claim(token string) (DirectoryEntry, error)
}

// DirectoryEntry is what a Directory knows of a token's thread.
type DirectoryEntry struct {
	Path, Parent, Owner string
	Generation          uint64 // the home's generation of the thread
	Bind                bool   // bound to the first process that says hello with it
}

// The errors of Directory.Claim that a child's hello answers.
var (
	ErrTokenUnknown = errors.New("unknown token")
	ErrTokenClaimed = errors.New("token claimed by another edge")
	ErrTokenRevoked = errors.New("token revoked")
)

// tokenHash is the hash a Directory knows a token by.
func tokenHash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// claimError answers a hello whose token the directory refused.
func claimError(err error) *wire.Error {
	switch {
	case errors.Is(err, ErrTokenUnknown):
		return wire.Errorf(wire.CodeUnauthenticated, "session.hello: unknown token")
	case errors.Is(err, ErrTokenClaimed):
		return wire.Errorf(wire.CodeUnauthenticated, "session.hello: token claimed by another edge")
	case errors.Is(err, ErrTokenRevoked):
		return wire.Errorf(wire.CodeRevoked, "session.hello: token revoked: the runtime was reopened or closed")
	}
	return wire.Errorf(wire.CodeStorage, "session.hello: the cluster could not be asked about this token")
}

// claimRemote is an edge's hello on a token it did not issue: the
// directory's claim, then a local runtime for the thread, bound to that
// token, whose reports the edge's mailbox publishes to the home.
func (c *conn) claimRemote(token string) (*binding, *wire.Error) {
	s := c.s
	if s.cfg.Directory == nil {
		return nil, wire.Errorf(wire.CodeUnauthenticated, "session.hello: unknown token")
	}
	var e DirectoryEntry
	var err error
	c.withoutSlot(func() { e, err = s.cfg.Directory.Claim(token) })
	if err != nil {
		s.log.Info("claim refused", "err", err)
		return nil, claimError(err)
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if b := s.tokens.lookup(token); b != nil { // another connection won
		return b, nil
	}
	rt, err := s.mgr.Open(e.Path, e.Parent, e.Owner)
	if err != nil {
		if errors.Is(err, relay.ErrClosed) {
			return nil, wire.Errorf(wire.CodeShuttingDown, "session.hello: server is shutting down")
		}
		s.log.Error("claimed token names a bad thread", "path", e.Path, "err", err)
		return nil, wire.Errorf(wire.CodeStorage, "session.hello: the cluster's entry for this token is not valid")
	}
	var bound *boundPeer
	if e.Bind && peercred.Binding {
		bound = s.newBound(rt.Generation())
	}
	s.peers.opened(rt.Path(), rt.Generation())
	b, old := s.tokens.bindToken(rt, token, nil, nil, bound, s.now())
	b.gen, b.claimed = e.Generation, true
	if old != nil {
		s.closeOpenedBy(old)
	}
	return b, nil
}

// claimLocal claims, at its first hello, a token the home issued itself,
// so that no edge serves it too.
func (c *conn) claimLocal(b *binding, token string) *wire.Error {
	s := c.s
	if s.cfg.Directory == nil || b.claimed {
		return nil
	}
	var err error
	c.withoutSlot(func() { _, err = s.cfg.Directory.Claim(token) })
	if err != nil {
		return claimError(err)
	}
	s.tokens.mu.Lock()
	b.claimed = true
	s.tokens.mu.Unlock()
	return nil
}

// withoutSlot runs f, which waits on the cluster, with the connection's
// scheduler slot given back (a host's connection holds none), so the wait
// holds up no other connection.
func (c *conn) withoutSlot(f func()) {
	if c.auth() == stateHost {
		f()
		return
	}
	c.s.sched.release()
	defer c.s.sched.acquire()
	f()
}

// RevokeToken revokes the token with this SHA-256 hash, as runtime.close
// would: an edge's directory calls it when the home reopened or closed the
// token's thread. It reports whether a live token was revoked.
func (s *Server) RevokeToken(hash [32]byte) bool {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	b := s.tokens.byHashLive(hash)
	if b == nil || !s.tokens.revokeIfLive(b) {
		return false
	}
	b.rt.Close()
	s.events.closed(b.rt)
	s.closeOpenedBy(b)
	return true
}
