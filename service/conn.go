package service

import (
	"container/list"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/peercred"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// connState is where a connection is in its life, as net/http's
// ConnState lists a server connection's. A connection has up to two
// goroutines: the loop goroutine (Server.serve, then conn.loop) reads and
// handles its frames in order, and the writer goroutine (conn.writer),
// started while something is queued that the socket did not take at once
// from the goroutine that queued it (conn.writeNow), writes it. Each
// state says who enters it.
//
// The first four are conn.state, one atomic value: the loop reads it
// before every request.
//
//	statePending → stateHost | stateChild   (the loop: a good session.hello)
//	stateHost ⇄ stateChild                  (the loop: another hello)
//	stateChild → stateRevoked               (the revoking goroutine)
//
// The three ending states may follow any of those; each is an event
// (event.go), given once, whose channel waiters select on: stateGone
// (conn.gone), stateDraining (conn.stop) and stateClosed (conn.written).
// A connection ends Draining then Closed; Gone may come before, in
// between or never.
type connState int32

const (
	// statePending is a socket peer from accept until a good
	// session.hello: at most Config.MaxPending of them, each killed at
	// Config.HelloTimeout. Entered in newConn (Serve's accept goroutine).
	statePending connState = iota
	// stateHost may call the host methods: the stdio peer from newConn
	// (ServeHost's goroutine), or a socket peer after a hello with the host
	// token (the loop).
	stateHost
	// stateChild is bound to one runtime generation by a child token
	// (conn.child): entered by the loop on such a hello.
	stateChild
	// stateRevoked is a child whose token was revoked (its runtime was
	// reopened or closed): the request in flight finishes, a paced wait
	// ends (conn.unpause), and the loop reads no other frame. Entered by
	// whoever revokes (conn.revoke, from a host's loop in runtime.open or
	// runtime.close); it is final, a later hello cannot leave it.
	stateRevoked
	// stateGone is a peer disconnected now (conn.kill): its blocked reads
	// and writes fail. Entered by Serve's accept goroutine (evicting the
	// oldest pending peer), the hello timer, whoever queues a frame over
	// Config.MaxUnsent or over the total budget (budget.go, which may
	// disconnect another, older non-reader), the writer when a write to
	// the socket fails, or the loop when its peer has closed its end
	// (cost.go: its frames left in the socket are not read).
	stateGone
	// stateDraining: the loop has ended (input ended, revoked, gone or
	// Shutdown) or Shutdown has nothing in flight; the writer writes what
	// is queued, then ends (conn.finish, from the loop's deferred exit or
	// Shutdown).
	stateDraining
	// stateClosed: the writer has ended (conn.written, closed by the
	// writer goroutine); the loop goroutine then closes the descriptor,
	// and only then leaves Server.pending and its token's connections: a
	// connection counts toward MaxPending and MaxConnsPerChild until its
	// descriptor is closed.
	stateClosed
)

// conn is one peer (see connState for its life). A second goroutine
// writes, so that a notification for a host that is slow to read never
// blocks the child whose report raised it.
type conn struct {
	s         *Server
	fr        *jsonframe.Reader
	nc        net.Conn // nil for the stdio host
	fixedHost bool
	state     atomic.Int32 // a connState up to stateRevoked; see its doc
	child     *binding     // set by session.hello with a child token; loop goroutine only
	// ownHandler: the loop handles its frames itself rather than on a
	// handler (handlers.go). Set as the loop starts, under qmu (the
	// writers read it there: keepIdleQueueCap).
	ownHandler bool
	cred       peercred.Cred // the socket peer's credentials, read at accept (bind.go)

	// waitInput blocks until the socket has bytes or has ended, and says
	// whether its peer is gone (nil: the stdio host, or no descriptor);
	// polled is set when it last found the peer there, so the read that
	// follows need not look again (meteredReader). Loop goroutine only.
	waitInput func() (gone bool, err error)
	polled    bool

	pendingAt *list.Element // in Server.pending until hello; guarded by Server.mu

	mu        sync.Mutex
	stopHello func() bool

	// ownCost is what a pending peer is charged to (cost.go); nil once
	// a child's hello bound it to a token. Loop goroutine only.
	ownCost *costBucket

	qmu     sync.Mutex
	queue   []byte    // frames to write, newlines included, one after another; guarded by qmu
	writing bool      // a writer goroutine runs; guarded by qmu
	ended   bool      // the last writer has closed written; guarded by qmu
	out     io.Writer // where the writer writes: the socket, or the host's stdout
	// tryWrite writes to the socket what it takes without waiting
	// (writeNow); nil for the stdio host or without a descriptor.
	tryWrite func([]byte) (int, error)
	// writeFailed: a write failed, so the rest is dropped. Only the writer
	// running touches it; writers run one after another, ordered by qmu.
	writeFailed bool
	unsent      int           // bytes in queue or being written; guarded by qmu
	budgeted    int           // of unsent, bytes counted in Server.budget; guarded by its mu
	budgetAt    *list.Element // in Server.budget.queued while budgeted > 0; guarded by its mu
	// room (1): the writer took the queue. Only the stdio host waits
	// for room (send), so only its connection has the channel; the
	// writer's send to a nil one does nothing.
	room     chan struct{}
	stop     event // stateDraining: given by finish
	stopOnce sync.Once
	gone     event // stateGone: given by kill
	goneOnce sync.Once
	unpause  event         // given by revoke: a paced connection stops waiting
	pause    time.Duration // wait this long before the next frame; loop goroutine only
	written  event         // stateClosed: given when the writer has ended
}

func (s *Server) newConn(r io.Reader, nc net.Conn, host bool) *conn {
	c := &conn{s: s, nc: nc, fixedHost: host, out: nc}
	if nc == nil {
		c.room = make(chan struct{}, 1)
	}
	var ready func() error
	if nc != nil {
		c.tryWrite = socketTryWrite(nc)
		if c.waitInput = peercred.WaitReadable(nc); c.waitInput != nil {
			ready = c.inputReady
		}
	}
	c.fr = jsonframe.NewReader(meteredReader{c: c, r: r}, ready)
	if host {
		c.state.Store(int32(stateHost))
	} else {
		c.ownCost = newCostBucket(float64(s.cfg.CostRate)/pendingCostShare, float64(s.cfg.CostBurst)/pendingCostShare, s.now())
	}
	return c
}

// State returns the connection's state: the latest ending state entered
// (Closed, Draining, Gone, in that order of precedence), else the one of
// conn.state.
func (c *conn) State() connState {
	switch {
	case c.written.isSet():
		return stateClosed
	case c.stop.isSet():
		return stateDraining
	case c.gone.isSet():
		return stateGone
	}
	return c.auth()
}

// auth is the state of conn.state alone, pending to revoked: who the peer
// is, for the methods it may call and the notifications it gets.
func (c *conn) auth() connState { return connState(c.state.Load()) }

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// authenticate enters stateHost or stateChild after a good hello, unless
// the connection was revoked meanwhile: that is final.
func (c *conn) authenticate(st connState) {
	for {
		old := c.state.Load()
		if connState(old) == stateRevoked || c.state.CompareAndSwap(old, int32(st)) {
			return
		}
	}
}

// isChild reports whether the peer is a child: bound by a child token,
// revoked or not.
func (c *conn) isChild() bool {
	st := c.auth()
	return st == stateChild || st == stateRevoked
}

// revoked reports whether the connection's token was revoked.
func (c *conn) revoked() bool { return c.auth() == stateRevoked }

// serve runs c until its input ends, it is killed or revoked, or Shutdown.
// Until its descriptor is closed the connection counts toward MaxPending
// and its token's MaxConnsPerChild, however its peer left.
func (s *Server) serve(c *conn) error {
	own := s.handlers.claimOwn()
	c.qmu.Lock()
	c.ownHandler = own
	c.qmu.Unlock()
	defer func() {
		if c.ownHandler {
			s.handlers.releaseOwn()
		}
		c.finish() // every queued reply is out before the connection closes
		if c.nc != nil {
			// A peer that stopped reading gets a few seconds, not forever.
			c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		}
		<-c.written.done()
		if c.nc != nil {
			c.nc.Close()
		}
		s.budget.forget(c)
		s.forget(c)
		c.unbind()
	}()
	return c.loop()
}

// kill disconnects the peer now: its blocked reads and writes fail.
func (c *conn) kill() {
	c.goneOnce.Do(func() {
		c.gone.fire()
		if c.nc != nil {
			c.nc.Close()
		}
	})
}

// revoke ends the connection after the request in flight: a blocked read
// is woken, and the loop stops before reading another frame.
func (c *conn) revoke() {
	if connState(c.state.Swap(int32(stateRevoked))) == stateRevoked {
		return
	}
	c.s.stats.revokedClosed.Add(1)
	c.unpause.fire()
	if c.nc != nil {
		c.nc.SetReadDeadline(time.Now())
	}
}

// unbind detaches the connection from its child token, if any.
func (c *conn) unbind() {
	if b := c.child; b != nil {
		c.child = nil
		if c.s.tokens.detach(b, c) {
			c.s.lastConnGone(b)
		}
	}
}

// finish tells the writer to write what is queued and end (starting one
// if none runs, so that written is closed). Frames queued after it may be
// lost.
func (c *conn) finish() {
	c.stopOnce.Do(func() {
		c.qmu.Lock()
		c.stop.fire()
		start := c.startWriterLocked()
		c.qmu.Unlock()
		if start {
			go c.writer()
		}
	})
}

func (c *conn) loop() error {
	for {
		if c.revoked() || c.isGone() {
			return nil
		}
		frame, err := c.fr.Next()
		if errors.Is(err, jsonframe.ErrTooLarge) {
			c.send(encodeReply(jsonframe.NullID, nil, wire.Errorf(wire.CodeInvalidRequest, "frame over 64 KiB: the rest of the line was skipped")))
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) || c.isShutting() || c.revoked() || c.isGone() {
				return nil
			}
			return err
		}
		// A connection over its share waits here, the frame unread, and
		// pays for the frame before it is decoded (cost.go).
		c.throttle()
		if c.revoked() || c.isGone() {
			return nil
		}
		c.charge(CostPerFrame + len(frame))
		if !c.s.begin() {
			c.send(encodeReply(jsonframe.NullID, nil, wire.Errorf(wire.CodeShuttingDown, "server is shutting down")))
			return nil
		}
		// The reply is queued after the slot is given back: waiting for a
		// host that does not read must not hold up anyone else. A host
		// takes no slot: it is never queued behind children's frames.
		slot := c.auth() != stateHost
		if slot {
			c.s.sched.acquire()
		}
		reply := c.s.handlers.run(c, frame)
		if slot {
			c.s.sched.release()
		}
		if reply != nil {
			c.charge(len(reply))
			c.send(reply)
		}
		c.s.end()
		if c.pause > 0 {
			c.wait(c.pause)
			c.pause = 0
		}
	}
}

// paceDropped is told that the gate dropped one of this child's reports:
// past the burst, the connection waits before its next frame, so that a
// flooding child spends the server's time at a bounded rate however fast
// it writes. The wait is outside the scheduler's slots.
func (c *conn) paceDropped() {
	now := c.s.now()
	if d := c.child.pacer().ReserveN(now, 1).DelayFrom(now); d > 0 {
		c.pause = d
	}
}

// wait pauses the loop for d, or until the connection ends.
func (c *conn) wait(d time.Duration) {
	done := make(chan struct{})
	stop := c.s.cfg.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
	case <-c.unpause.done():
		stop()
	case <-c.gone.done():
		stop()
	case <-c.s.closing:
		stop()
	}
}

func (c *conn) isGone() bool { return c.gone.isSet() }

func (c *conn) isShutting() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.shutting
}

// handle runs one frame and returns its encoded reply, or nil for a
// notification.
func (c *conn) handle(frame []byte) []byte {
	req, id, rerr := jsonframe.Decode(frame)
	if rerr != nil {
		if id == nil {
			return nil // a notification gets no reply, not even an error
		}
		return encodeReply(id, nil, rerr)
	}
	result, rerr := c.dispatch(req)
	if req.ID == nil {
		return nil // a notification gets no reply, not even an error
	}
	return encodeReply(req.ID, result, rerr)
}
