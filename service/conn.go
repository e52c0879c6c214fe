package service

import (
	"bufio"
	"container/list"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// roles of a connection.
const (
	roleNone int32 = iota
	roleHost
	roleChild
)

// conn is one peer. Its frames are read and handled in order by one
// goroutine; a second one writes, so that a notification for a host that
// is slow to read never blocks the child whose report raised it.
type conn struct {
	s         *Server
	fr        *frameReader
	nc        net.Conn // nil for the stdio host
	fixedHost bool
	role      atomic.Int32
	child     *binding // set by session.hello with a child token; loop goroutine only

	pendingAt *list.Element // in Server.pending until hello; guarded by Server.mu

	mu        sync.Mutex
	stopHello func() bool

	out      chan []byte   // frames to write, newline included
	unsent   atomic.Int64  // bytes of frames in out or being written
	stop     chan struct{} // closed by finish: write what is queued, then end
	stopOnce sync.Once
	gone     chan struct{} // closed by kill: the peer is disconnected
	goneOnce sync.Once
	revoked  atomic.Bool   // its token was revoked: end after the request in flight
	written  chan struct{} // closed when the writer has ended
}

// outQueue is how many frames may wait for a peer. A socket peer's replies
// are also bounded in bytes (Config.MaxUnsent); notifications that find the
// queue full are dropped and counted.
const outQueue = 1024

func (s *Server) newConn(r io.Reader, nc net.Conn, host bool) *conn {
	c := &conn{s: s, fr: newFrameReader(r), nc: nc, fixedHost: host,
		out: make(chan []byte, outQueue), stop: make(chan struct{}),
		gone: make(chan struct{}), written: make(chan struct{})}
	if host {
		c.role.Store(roleHost)
	}
	return c
}

// serve runs c until its input ends, it is killed or revoked, or Shutdown.
func (s *Server) serve(c *conn, w io.Writer) error {
	go c.writer(w)
	defer func() {
		s.forget(c)
		c.unbind()
		c.finish() // every queued reply is out before the connection closes
		if c.nc != nil {
			// A peer that stopped reading gets a few seconds, not forever.
			c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		}
		<-c.written
	}()
	return c.loop()
}

// kill disconnects the peer now: its blocked reads and writes fail.
func (c *conn) kill() {
	c.goneOnce.Do(func() {
		close(c.gone)
		if c.nc != nil {
			c.nc.Close()
		}
	})
}

// revoke ends the connection after the request in flight: a blocked read
// is woken, and the loop stops before reading another frame.
func (c *conn) revoke() {
	if c.revoked.Swap(true) {
		return
	}
	c.s.stats.revokedClosed.Add(1)
	if c.nc != nil {
		c.nc.SetReadDeadline(time.Now())
	}
}

// unbind detaches the connection from its child token, if any.
func (c *conn) unbind() {
	if c.child != nil {
		c.s.tokens.detach(c.child, c)
		c.child = nil
	}
}

// finish tells the writer to write what is queued and end. Frames queued
// after it may be lost.
func (c *conn) finish() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *conn) writer(w io.Writer) {
	defer close(c.written)
	bw := bufio.NewWriterSize(w, 16<<10)
	failed := false
	write := func(b []byte) {
		if !failed {
			_, err := bw.Write(b)
			if err == nil && len(c.out) == 0 {
				err = bw.Flush() // nothing else queued: send what we have in one write
			}
			if err != nil {
				failed = true // from here on, frames are dropped: the peer is gone
				if c.fixedHost {
					c.s.log.Warn("writing to the host failed", "err", err)
				} else {
					c.s.log.Debug("writing to a socket peer failed", "err", err)
				}
			}
		}
		c.unsent.Add(-int64(len(b)))
	}
	for {
		select {
		case b := <-c.out:
			write(b)
		case <-c.stop:
			for {
				select {
				case b := <-c.out:
					write(b)
				default:
					if !failed {
						bw.Flush()
					}
					return
				}
			}
		}
	}
}

func (c *conn) loop() error {
	for {
		if c.revoked.Load() {
			return nil
		}
		frame, err := c.fr.next()
		if errors.Is(err, errFrameTooLarge) {
			c.send(nullID, nil, errorf(CodeInvalidRequest, "frame over 64 KiB: the rest of the line was skipped"))
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) || c.isShutting() || c.revoked.Load() || c.isGone() {
				return nil
			}
			return err
		}
		if !c.s.begin() {
			c.send(nullID, nil, errorf(CodeShuttingDown, "server is shutting down"))
			return nil
		}
		c.s.sched.acquire()
		c.handle(frame)
		c.s.sched.release()
		c.s.end()
	}
}

func (c *conn) isGone() bool {
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

func (c *conn) isShutting() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.shutting
}

func (c *conn) handle(frame []byte) {
	req, id, rerr := decodeRequest(frame)
	if rerr != nil {
		c.send(id, nil, rerr)
		return
	}
	result, rerr := c.dispatch(req)
	if req.ID == nil {
		return // a notification gets no reply, not even an error
	}
	c.send(req.ID, result, rerr)
}

// send queues a reply. A socket peer whose unsent replies would pass
// Config.MaxUnsent is disconnected instead; otherwise send waits for room
// in the queue (back-pressure on that peer alone) until the peer is gone or
// shutdown, when the reply is dropped (that peer was not reading it).
func (c *conn) send(id json.RawMessage, result any, rerr *rpcError) {
	resp := response{JSONRPC: "2.0", ID: id, Error: rerr}
	if rerr == nil {
		resp.Result = result
	}
	b, err := json.Marshal(resp)
	if err != nil {
		c.s.log.Error("encoding a reply failed", "err", err)
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: id, Error: errorf(CodeInternal, "the reply could not be encoded")})
	}
	b = append(b, '\n')
	if c.unsent.Add(int64(len(b))) > int64(c.s.cfg.MaxUnsent) && c.nc != nil {
		c.unsent.Add(-int64(len(b)))
		c.s.stats.slowPeers.Add(1)
		c.s.log.Info("disconnected a peer that does not read its replies", "limit", c.s.cfg.MaxUnsent)
		c.kill()
		return
	}
	select {
	case c.out <- b:
		return
	default:
	}
	select {
	case c.out <- b:
		return
	case <-c.s.closing:
	case <-c.stop:
	case <-c.gone:
	}
	c.unsent.Add(-int64(len(b)))
}

// errSlowPeer is returned when a notification is dropped because the peer
// has not read the frames queued before it.
var errSlowPeer = errors.New("service: host is not reading; notification dropped")

// notify queues a server-to-peer notification without ever waiting. It
// counts toward a socket peer's unsent bytes but never disconnects it: over
// the bound, the notification is dropped.
func (c *conn) notify(method string, params any) error {
	b, err := json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	select {
	case <-c.stop:
		return nil // the connection is ending
	case <-c.gone:
		return nil
	default:
	}
	n := int64(len(b))
	if c.unsent.Add(n) > int64(c.s.cfg.MaxUnsent) {
		c.unsent.Add(-n)
		c.s.stats.notifyDropped.Add(1)
		return errSlowPeer
	}
	select {
	case c.out <- b:
		return nil
	default:
		c.unsent.Add(-n)
		c.s.stats.notifyDropped.Add(1)
		return errSlowPeer
	}
}
