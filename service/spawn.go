package service

import (
	"crypto/sha256"
	"errors"
	"os"
	"strings"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/peercred"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

// This file is the spawn token (docs/protocol.md, "Spawn tokens"): a host
// puts one token in its own environment, and every process below it that
// finds it (a subagent started by any package, with no diagrelay code of
// its own in between) opens its own thread below the host's path. The
// token is worth nothing outside the host's process tree: each use walks
// the using process's parent chain to the host's process (bind.go's
// walk), and the thread it opens is bound to that process alone.

// spawnGrant is one spawn token: the path it opens below, and the host's
// process, whose descendants may use it.
type spawnGrant struct {
	path  string
	token string
	owner *peercred.Proc
	// spawned counts the live threads opened with the path's spawn
	// tokens (Config.MaxNested); a new token for the path keeps it.
	spawned *nestedCount
}

// setSpawn makes token the spawn token for path, owned by owner,
// replacing the path's previous one.
func (t *tokenTable) setSpawn(path, token string, owner *peercred.Proc) {
	g := &spawnGrant{path: path, token: token, owner: owner, spawned: &nestedCount{}}
	t.mu.Lock()
	old := t.spawnByPath[path]
	if old != nil {
		delete(t.spawnByHash, sha256.Sum256([]byte(old.token)))
		g.spawned = old.spawned
	}
	t.spawnByPath[path] = g
	t.spawnByHash[sha256.Sum256([]byte(token))] = g
	t.mu.Unlock()
	if old != nil {
		old.owner.Close()
	}
}

// lookupSpawn returns the spawn token's grant, or nil.
func (t *tokenTable) lookupSpawn(token string) *spawnGrant {
	h := sha256.Sum256([]byte(token))
	t.mu.Lock()
	g := t.spawnByHash[h]
	t.mu.Unlock()
	if g == nil || !equalToken(g.token, token) {
		return nil
	}
	return g
}

// isLive reports whether path has a live token.
func (t *tokenTable) isLive(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byPath[path] != nil
}

// closeSpawns lets go of every spawn token's process (Shutdown).
func (t *tokenTable) closeSpawns() {
	t.mu.Lock()
	grants := make([]*spawnGrant, 0, len(t.spawnByPath))
	for _, g := range t.spawnByPath {
		grants = append(grants, g)
	}
	clear(t.spawnByPath)
	clear(t.spawnByHash)
	t.mu.Unlock()
	for _, g := range grants {
		g.owner.Close()
	}
}

// spawnToken answers spawn.token {path}: a new spawn token for threads
// below path, owned by the host's process.
func (c *conn) spawnToken(raw []byte) (any, *wire.Error) {
	path, e := onlyPath(raw)
	if e != nil {
		return nil, e
	}
	switch {
	case c.s.cfg.Edge:
		return nil, wire.Errorf(wire.CodeForbidden, "spawn.token: this server is a cluster edge: threads are opened on the home (docs/cluster.md)")
	case !peercred.Binding:
		return nil, wire.Errorf(wire.CodeForbidden, "spawn.token: this system gives no peer credentials, so a spawn token cannot be bound to a process")
	}
	owner, err := c.hostProc()
	if err != nil {
		return nil, wire.Errorf(wire.CodeForbidden, "spawn.token: the host's process is not known, so a spawn token cannot be bound to it")
	}
	token := NewToken()
	c.s.tokens.setSpawn(path, token, owner)
	return wire.SpawnToken{Path: path, Token: token}, nil
}

// hostProc is the host's process: for the stdio host, the process that
// started serve (its parent, which holds the other end of stdin and
// stdout); for a socket host, its peer.
func (c *conn) hostProc() (*peercred.Proc, error) {
	if !c.fixedHost {
		if !c.cred.Known || c.cred.PID <= 0 {
			return nil, errors.New("no peer credentials")
		}
		return peercred.Peer(c.nc, c.cred, false)
	}
	pid := os.Getppid()
	if pid <= 1 {
		return nil, errors.New("serve's parent has exited")
	}
	ref, err := peercred.Lookup(pid)
	if err != nil {
		return nil, err
	}
	// Still serve's parent once it is held: the pid was not reused.
	if os.Getppid() != pid {
		ref.Close()
		return nil, errors.New("serve's parent has exited")
	}
	return ref, nil
}

// spawnOpen answers spawn.open {token, path}: a descendant of the spawn
// token's process opens path, strictly below the token's path and not
// open now, and gets its token, bound to the calling process already.
func (c *conn) spawnOpen(raw []byte) (any, *wire.Error) {
	var p wire.SpawnOpenParams
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	if e := required("token", p.Token); e != nil {
		return nil, e
	}
	if e := pathParam("path", p.Path); e != nil {
		return nil, e
	}
	s := c.s
	if s.cfg.Edge {
		return nil, wire.Errorf(wire.CodeForbidden, "spawn.open: this server is a cluster edge: threads are opened on the home (docs/cluster.md)")
	}
	g := s.tokens.lookupSpawn(p.Token)
	if g == nil {
		return nil, wire.Errorf(wire.CodeUnauthenticated, "spawn.open: unknown spawn token")
	}
	if !strings.HasPrefix(p.Path, g.path+"/") {
		return nil, wire.Errorf(wire.CodeForbidden, "spawn.open: this spawn token opens threads only below %s", g.path)
	}
	cred := c.cred
	if !cred.Known || cred.PID <= 0 {
		return nil, c.refuseSpawn(g, "the system did not say which process connected")
	}
	self, err := peercred.Peer(c.nc, cred, true)
	if err != nil {
		return nil, c.refuseSpawn(g, "the connecting process has exited")
	}
	if !peercred.DescendsFrom(cred, self, g.owner) {
		self.Close()
		return nil, c.refuseSpawn(g, "not a descendant of the spawn token's process")
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.tokens.isLive(p.Path) {
		self.Close()
		return nil, wire.Errorf(wire.CodeForbidden, "spawn.open: thread %s is open; a spawn token opens only a thread that is not", p.Path)
	}
	if max := s.cfg.MaxNested; !s.tokens.room(g.spawned, p.Path, max) {
		self.Close()
		s.stats.nestedLimited.Add(1)
		return nil, wire.Errorf(wire.CodeTooManyConns, "too many nested runtimes (at most %d live below %s)", max, g.path)
	}
	b, e := s.openThread(p.Path, "", "", nil, g.spawned, true)
	if e != nil {
		self.Close()
		return nil, e
	}
	b.bound.mu.Lock()
	s.claimLocked(b, self, cred)
	b.bound.mu.Unlock()
	s.closeHostsUnder(b, self) // as any claim: a child's process is not the host
	return wire.OpenResult{Path: b.path, Token: b.token, Generation: b.gen}, nil
}

// refuseSpawn counts and logs a spawn.open refused for its process.
func (c *conn) refuseSpawn(g *spawnGrant, why string) *wire.Error {
	s := c.s
	s.stats.peerRefused.Add(1)
	s.log.Warn("refused a spawn.open", "below", g.path, "reason", why,
		"pid", c.cred.PID, "uid", c.cred.UID, "exe", sanitize.Source(peercred.ExePath(c.cred.PID)))
	return wire.Errorf(wire.CodeUnauthenticated, "spawn.open: this spawn token is for the processes below the one it was given to")
}

// closeSpawned closes the thread of a spawned child whose process exited:
// it opened the thread for itself, so nobody else holds its token, and
// its place below the spawn token's path is free again. Its status and
// mailbox stay readable.
func (s *Server) closeSpawned(b *binding) {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.tokens.revokeIfLive(b) {
		b.rt.Close()
		s.events.closed(b.rt)
		s.closeOpenedBy(b)
	}
}
