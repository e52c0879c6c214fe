package service

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diagrelay/diagrelay/internal/peercred"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

// This file binds a child token to its process (docs/protocol.md, "Bound
// tokens"): the other-user check at accept, the first hello's claim, the
// descendant check at each later hello, the exit, and the rule that keeps
// a bound child's processes from becoming the host. peer.go says how a
// process is known.

// CanBindPeers reports whether this system gives the peer credentials a
// bound token needs (Linux and macOS); elsewhere runtime.open {bind: true}
// is refused and Config.BindPeer has no token to bind.
const CanBindPeers = peercred.Binding

// boundPeer is a bound token's process. It is guarded by its mu; exited
// is set under tokenTable.mu as well, so that attach sees it.
type boundPeer struct {
	table *peerTable
	gen   uint64

	mu      sync.Mutex
	owner   *peercred.Proc // nil until the first hello
	info    peerInfo
	exited  bool
	stopped bool // revoked: the watch is over
	byExit  bool // the pidfd tells the exit; else the last connection closing does
}

// peerInfo is what status and watch show of a bound process.
type peerInfo struct {
	pid int
	uid uint32
	exe string // sanitized as a source is
}

// threadPeer is what a thread's status shows of its latest generation's
// bound process, and the hellos refused over all its generations.
type threadPeer struct {
	gen     uint64
	info    *peerInfo
	exited  time.Time
	refused uint64
}

// peerTable is the bound processes, by thread for the status, and the
// live ones for the host-token rule.
type peerTable struct {
	uid int // the service's own; peers of another uid but 0 are closed

	mu      sync.Mutex
	threads map[string]*threadPeer
	owners  map[*boundPeer]*peercred.Proc // claimed, neither exited nor revoked
	live    atomic.Int32                  // len(owners), read without mu
}

func newPeerTable() *peerTable {
	return &peerTable{uid: os.Getuid(), threads: make(map[string]*threadPeer), owners: make(map[*boundPeer]*peercred.Proc)}
}

// threadLocked returns path's entry, made on first use.
func (p *peerTable) threadLocked(path string) *threadPeer {
	tp := p.threads[path]
	if tp == nil {
		tp = &threadPeer{}
		p.threads[path] = tp
	}
	return tp
}

// opened starts a new generation's entry: no peer, not exited.
func (p *peerTable) opened(path string, gen uint64) {
	p.mu.Lock()
	tp := p.threadLocked(path)
	tp.gen, tp.info, tp.exited = gen, nil, time.Time{}
	p.mu.Unlock()
}

// view is the thread's peer, exit time and refused hellos.
func (p *peerTable) view(path string) (info *peerInfo, exited time.Time, refused uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tp := p.threads[path]; tp != nil {
		return tp.info, tp.exited, tp.refused
	}
	return nil, time.Time{}, 0
}

// acceptPeer reads the credentials of a new socket peer and reports
// whether it may stay: a peer whose uid is neither the service's nor 0 is
// closed before anything is read from it (ssh-agent does the same).
func (s *Server) acceptPeer(c *conn) bool {
	c.cred = peercred.Of(c.nc)
	if c.cred.Known && int(c.cred.UID) != s.peers.uid && c.cred.UID != 0 {
		s.stats.foreignPeers.Add(1)
		s.log.Warn("closed a connection from another user", "uid", c.cred.UID, "pid", c.cred.PID)
		return false
	}
	return true
}

// newBound is the process half of a bound token, for generation gen of
// path.
func (s *Server) newBound(gen uint64) *boundPeer {
	return &boundPeer{table: s.peers, gen: gen}
}

// admitPeer checks a hello with bound token b: the first one claims the
// token for its process; later ones must come from that process or a
// descendant of it while it lives. nil means admitted.
func (c *conn) admitPeer(b *binding) *wire.Error {
	bp := b.bound
	if bp == nil {
		return nil
	}
	cred := c.cred
	if !cred.Known || cred.PID <= 0 {
		return c.refusePeer(b, "the system did not say which process connected")
	}
	bp.mu.Lock()
	if bp.exited {
		bp.mu.Unlock()
		return c.refusePeer(b, whyExited)
	}
	if owner := bp.owner; owner != nil {
		bp.mu.Unlock()
		self, err := peercred.Peer(c.nc, cred, false)
		if err != nil {
			return c.refusePeer(b, "the connecting process has exited")
		}
		ok := peercred.DescendsFrom(cred, self, owner)
		self.Close()
		if !ok {
			return c.refusePeer(b, "neither the bound process nor a descendant of it")
		}
		return nil
	}
	if bp.stopped {
		bp.mu.Unlock()
		return wire.Errorf(wire.CodeRevoked, "session.hello: token revoked: runtime %s was reopened or closed", b.path)
	}
	ref, err := peercred.Peer(c.nc, cred, true)
	if err != nil {
		bp.mu.Unlock()
		return c.refusePeer(b, "the connecting process has exited")
	}
	c.s.claimLocked(b, ref, cred)
	bp.mu.Unlock()
	c.s.closeHostsUnder(b, ref)
	return nil
}

// closeHostsUnder closes the socket host connections whose process is
// ref, the process that just claimed bound token b, or a descendant of it:
// a child's process that said hello with host.token before its first
// bound hello must not stay the host (admitHost refuses such a hello
// after the claim). Each is counted as a refused hello of b's thread.
func (s *Server) closeHostsUnder(b *binding, ref *peercred.Proc) {
	s.mu.Lock()
	var hosts []*conn
	for h := range s.hosts {
		if h.auth() == stateHost && h.cred.Known && h.cred.PID > 0 {
			hosts = append(hosts, h)
		}
	}
	s.mu.Unlock()
	for _, h := range hosts {
		if !peercred.DescendsFrom(h.cred, nil, ref) {
			continue
		}
		s.stats.peerRefused.Add(1)
		s.peers.mu.Lock()
		s.peers.threadLocked(b.path).refused++
		s.peers.mu.Unlock()
		s.log.Warn("closed a host connection of a bound child's process", "thread", b.path,
			"pid", h.cred.PID, "uid", h.cred.UID, "exe", sanitize.Source(peercred.ExePath(h.cred.PID)))
		h.kill()
	}
}

// claimLocked makes ref, the process of cred (its procRef made with
// watch), the owner of bound token b, and watches for its exit. Called
// with b.bound.mu held, before the token's first hello.
func (s *Server) claimLocked(b *binding, ref *peercred.Proc, cred peercred.Cred) {
	bp := b.bound
	bp.owner = ref
	bp.info = peerInfo{pid: cred.PID, uid: cred.UID, exe: sanitize.Source(peercred.ExePath(cred.PID))}
	s.peers.mu.Lock()
	if tp := s.peers.threadLocked(b.path); tp.gen == bp.gen {
		info := bp.info
		tp.info = &info
	}
	s.peers.owners[bp] = ref
	s.peers.live.Store(int32(len(s.peers.owners)))
	s.peers.mu.Unlock()
	bp.byExit = ref.WatchExit(func() { s.peerExited(b) })
}

// refusePeer counts and logs a hello refused by the binding.
func (c *conn) refusePeer(b *binding, why string) *wire.Error {
	if b.revoked.Load() { // revoked meanwhile: that is the answer
		return wire.Errorf(wire.CodeRevoked, "session.hello: token revoked: runtime %s was reopened or closed", b.path)
	}
	s := c.s
	s.stats.peerRefused.Add(1)
	s.peers.mu.Lock()
	s.peers.threadLocked(b.path).refused++
	s.peers.mu.Unlock()
	s.log.Warn("refused a hello with a bound token", "thread", b.path, "reason", why,
		"pid", c.cred.PID, "uid", c.cred.UID, "exe", sanitize.Source(peercred.ExePath(c.cred.PID)))
	if why == whyExited {
		return wire.Errorf(wire.CodeUnauthenticated, "session.hello: this token is bound to another process, which has exited")
	}
	return wire.Errorf(wire.CodeUnauthenticated, "session.hello: this token is bound to another process")
}

// whyExited is the reason logged for a hello after the bound process's
// exit; the child is told so too.
const whyExited = "the bound process has exited"

// admitHost checks a hello with the host token: refused when the
// connecting process is a live bound child's process or a descendant of
// one, since host.token is readable by every process of the user.
func (c *conn) admitHost() *wire.Error {
	s := c.s
	if s.peers.live.Load() == 0 || !c.cred.Known || c.cred.PID <= 0 {
		return nil
	}
	self, err := peercred.Peer(c.nc, c.cred, false)
	if err != nil {
		return c.refuseHost("the connecting process has exited")
	}
	defer self.Close()
	chain := peercred.Ancestry(c.cred.PID)
	s.peers.mu.Lock()
	owners := make(map[int]*peercred.Proc, len(s.peers.owners))
	for _, ref := range s.peers.owners {
		owners[ref.PID] = ref
	}
	s.peers.mu.Unlock()
	for _, p := range chain {
		// An owner found in the chain counts only while it lives: a pid of
		// an exited child may belong to anyone now.
		if ref := owners[p]; ref != nil && ref.Alive() {
			return c.refuseHost("a bound child's process or a descendant of one")
		}
	}
	if !self.Alive() {
		return c.refuseHost("the connecting process has exited")
	}
	return nil
}

func (c *conn) refuseHost(why string) *wire.Error {
	c.s.stats.hostRefused.Add(1)
	c.s.log.Warn("refused a hello with the host token", "reason", why,
		"pid", c.cred.PID, "uid", c.cred.UID, "exe", sanitize.Source(peercred.ExePath(c.cred.PID)))
	return wire.Errorf(wire.CodeUnauthenticated, "session.hello: a child's process cannot be the host")
}

// stopLocked ends the watch of a revoked token's process. Called with
// tokenTable.mu held.
func (bp *boundPeer) stopLocked() {
	bp.mu.Lock()
	bp.stopped = true
	owner := bp.owner
	bp.mu.Unlock()
	bp.table.forget(bp)
	owner.Close()
}

func (p *peerTable) forget(bp *boundPeer) {
	p.mu.Lock()
	delete(p.owners, bp)
	p.live.Store(int32(len(p.owners)))
	p.mu.Unlock()
}

// peerExited is told that b's process has exited (its pidfd became
// readable, or without one its token's last connection closed): the thread
// shows the exit, subscribers get an exited event, and the token's
// connections are closed; the token is refused from now on, and the
// runtime stays open until the host closes it.
func (s *Server) peerExited(b *binding) {
	bp := b.bound
	conns := s.tokens.markExited(b)
	if conns == nil {
		return // revoked, or told already
	}
	at := s.now()
	s.peers.forget(bp)
	s.peers.mu.Lock()
	if tp := s.peers.threadLocked(b.path); tp.gen == bp.gen {
		tp.exited = at
	}
	s.peers.mu.Unlock()
	bp.mu.Lock()
	owner, info := bp.owner, bp.info
	bp.mu.Unlock()
	owner.Close()
	for _, c := range conns {
		c.revoke()
	}
	s.events.exited(b.path, bp.gen, at, &wire.Peer{PID: info.pid, UID: info.uid, Exe: info.exe})
	s.log.Info("a bound child's process exited", "thread", b.path, "pid", info.pid)
	if b.spawned {
		s.closeSpawned(b)
	}
}

// lastConnGone is told that b has no connection left: without a pidfd,
// that is its process's exit.
func (s *Server) lastConnGone(b *binding) {
	bp := b.bound
	if bp == nil {
		return
	}
	bp.mu.Lock()
	gone := bp.owner != nil && !bp.byExit && !bp.exited
	bp.mu.Unlock()
	if gone {
		s.peerExited(b)
	}
}

// status adds the thread's peer members to its status.
func (p *peerTable) status(r wire.Status) wire.Status {
	info, at, n := p.view(r.Path)
	r.Peer, r.Exited = wirePeer(info, at)
	r.PeerRefused = n
	return r
}

// list adds each thread's peer members to thread.list.
func (p *peerTable) list(r wire.Threads) wire.Threads {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range r.Threads {
		if tp := p.threads[r.Threads[i].Path]; tp != nil {
			t := &r.Threads[i]
			t.Peer, t.Exited = wirePeer(tp.info, tp.exited)
			t.PeerRefused = tp.refused
		}
	}
	return r
}

// closeAll ends the watch of every bound process (Shutdown).
func (p *peerTable) closeAll() {
	p.mu.Lock()
	refs := make([]*peercred.Proc, 0, len(p.owners))
	for bp, ref := range p.owners {
		refs = append(refs, ref)
		delete(p.owners, bp)
	}
	p.live.Store(0)
	p.mu.Unlock()
	for _, ref := range refs {
		ref.Close()
	}
}
