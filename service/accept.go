package service

import (
	"container/list"
	"errors"
	"io"
	"net"
	"time"

	"github.com/diagrelay/diagrelay/internal/peercred"
)

// Accepting peers: Serve's loop, the pending set and its eviction, and a
// connection's move from pending to authenticated and out.

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("service: server closed")

// Serve accepts socket peers on l until Shutdown, which closes l. A socket
// peer starts pending: it must send session.hello with a child token (or
// the host token) within Config.HelloTimeout of accept, and at most
// Config.MaxPending peers are pending at once. Accept errors other than l
// being closed are logged and retried after a pause (up to a second).
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	ba := newBatchAccepter(l, s.mem.accept)
	var pause time.Duration
	for {
		nc, err := l.Accept()
		if err == nil {
			s.admit(nc, false)
			if ba != nil {
				for _, nc := range ba.drain() {
					s.admit(nc, true) // drain looked at each peer a moment ago
				}
			}
			pause = 0
			continue
		}
		s.mu.Lock()
		shutting := s.shutting
		if shutting || errors.Is(err, net.ErrClosed) {
			delete(s.listeners, l)
		}
		s.mu.Unlock()
		switch {
		case shutting:
			return ErrServerClosed
		case errors.Is(err, net.ErrClosed):
			return err
		}
		pause = min(max(2*pause, 5*time.Millisecond), time.Second)
		s.log.Warn("accept failed; retrying", "err", err, "pause", pause)
		select {
		case <-time.After(pause):
		case <-s.closing:
		}
	}
}

// admit registers and serves a connection just accepted. A peer that
// connected and already left (a connect churn) costs one look, not a
// connection; looked says that look was taken already. The rest is
// registered here, in accept order (eviction closes the oldest), and
// served off it.
func (s *Server) admit(nc net.Conn, looked bool) {
	s.mem.accept()
	if !looked && peercred.Gone(nc) {
		nc.Close()
		return
	}
	c := s.newConn(nc, nc, false)
	if !s.acceptPeer(c) || !s.addPending(c) {
		nc.Close()
		return
	}
	go func() {
		defer nc.Close()
		s.serve(c)
	}()
}

// ServeHost serves the host on r and w (normally stdin and stdout) until r
// ends or Shutdown. The stdio peer is the host without any hello.
func (s *Server) ServeHost(r io.Reader, w io.Writer) error {
	c := s.newConn(r, nil, true)
	c.out = w
	c.tryWrite = hostTryWrite(w)
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.conns[c] = struct{}{}
	s.peakConns = max(s.peakConns, len(s.conns))
	s.mu.Unlock()
	return s.serve(c)
}

// addPending registers a new socket peer, closing the oldest pending one
// when MaxPending are waiting, and starts its hello deadline.
func (s *Server) addPending(c *conn) bool {
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return false
	}
	var evict *conn
	if s.pending.Len() >= s.cfg.MaxPending {
		evict = s.pending.Remove(s.evictionCandidate()).(*conn)
		evict.pendingAt = nil
	}
	c.pendingAt = s.pending.PushBack(c)
	s.conns[c] = struct{}{}
	s.peakConns = max(s.peakConns, len(s.conns))
	s.mu.Unlock()
	if evict != nil {
		s.stats.pendingEvicted.Add(1)
		s.log.Info("closed the oldest connection waiting for its hello, to make room", "max_pending", s.cfg.MaxPending)
		evict.kill()
	}
	stop := s.cfg.AfterFunc(s.cfg.HelloTimeout, func() {
		s.mu.Lock()
		late := c.pendingAt != nil
		if late {
			s.pending.Remove(c.pendingAt)
			c.pendingAt = nil
		}
		s.mu.Unlock()
		if late {
			s.stats.helloTimeouts.Add(1)
			s.log.Info("closed a connection without a hello at its deadline", "timeout", s.cfg.HelloTimeout)
			c.kill()
		}
	})
	c.mu.Lock()
	c.stopHello = stop
	c.mu.Unlock()
	return true
}

// evictionCandidate is the pending peer to close for a new one: among the
// evictScan oldest, the oldest whose peer has already closed its end (a
// connect churn leaves many), else the oldest. So a churn of connections
// that close at once does not push out a child that says hello. s.mu held.
func (s *Server) evictionCandidate() *list.Element {
	e := s.pending.Front()
	for i := 0; e != nil && i < evictScan; e, i = e.Next(), i+1 {
		if c := e.Value.(*conn); c.isGone() || peercred.Gone(c.nc) {
			return e
		}
	}
	return s.pending.Front()
}

// authenticated takes c out of the pending peers after a good hello.
func (s *Server) authenticated(c *conn) {
	s.mu.Lock()
	if c.pendingAt != nil {
		s.pending.Remove(c.pendingAt)
		c.pendingAt = nil
	}
	s.mu.Unlock()
	c.mu.Lock()
	stop := c.stopHello
	c.stopHello = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// forget removes an ended connection from the server's sets.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	delete(s.hosts, c)
	if c.pendingAt != nil {
		s.pending.Remove(c.pendingAt)
		c.pendingAt = nil
	}
	var flood bool
	flood, s.peakConns = connsLeft(len(s.conns), s.peakConns)
	s.mu.Unlock()
	s.authenticated(c) // stops the hello timer
	if flood {
		s.mem.arm()
	}
}
