package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// Mailbox is what the server needs of a mailbox: the relay's Post, and the
// host's Read and Ack. mailbox.Store and mailbox.Memory both fit.
type Mailbox interface {
	relay.Mailbox
	Read(recipient string, limit int) ([]mailbox.Entry, error)
	Ack(recipient string, ids []uint64) (int, error)
}

// Config configures a Server.
type Config struct {
	Mode    relay.Mode // the parent session's mode; "" means rpc
	Mailbox Mailbox    // required
	// HostToken, if not empty, lets a socket peer become the host by
	// sending it in session.hello. The stdio peer is always the host.
	HostToken string

	// Passed to the relay.Manager; zero values mean its defaults.
	Now         func() time.Time
	AfterFunc   func(d time.Duration, f func()) (stop func() bool)
	NotifyRate  rate.Limit
	NotifyBurst int

	// Logf, if set, is told of connection-level failures.
	Logf func(format string, args ...any)
}

// Server answers JSON-RPC 2.0, one object per line, for hosts and children.
// It is safe for concurrent use; each connection is served by one goroutine
// that handles its requests in order.
type Server struct {
	cfg    Config
	mgr    *relay.Manager
	tokens *tokenTable

	mu        sync.Mutex
	conns     map[*conn]struct{}
	listeners map[net.Listener]struct{}
	inflight  int
	shutting  bool
	idle      chan struct{} // closed when shutting and inflight == 0
}

// New returns a Server with its own relay.Manager, whose notifications go
// to the connected hosts as ui.notify.
func New(c Config) *Server {
	s := &Server{
		cfg:       c,
		tokens:    newTokenTable(),
		conns:     make(map[*conn]struct{}),
		listeners: make(map[net.Listener]struct{}),
		idle:      make(chan struct{}),
	}
	s.mgr = relay.NewManager(relay.Config{
		Mode:        c.Mode,
		Notifier:    hostNotifier{s},
		Mailbox:     c.Mailbox,
		Now:         c.Now,
		AfterFunc:   c.AfterFunc,
		NotifyRate:  c.NotifyRate,
		NotifyBurst: c.NotifyBurst,
		OnSinkError: func(err error) { s.logf("%v", err) },
	})
	return s
}

// Manager returns the relay.Manager behind the server.
func (s *Server) Manager() *relay.Manager { return s.mgr }

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("service: server closed")

// Serve accepts socket peers on l until Shutdown. A socket peer starts
// unauthenticated: it must send session.hello with a child token (or the
// host token) first.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			shutting := s.shutting
			delete(s.listeners, l)
			s.mu.Unlock()
			if shutting {
				return ErrServerClosed
			}
			return err
		}
		go func() {
			defer nc.Close()
			s.serve(nc, nc, nc, false)
		}()
	}
}

// ServeHost serves the host on r and w (normally stdin and stdout) until r
// ends or Shutdown. The stdio peer is the host without any hello.
func (s *Server) ServeHost(r io.Reader, w io.Writer) error {
	return s.serve(r, w, nil, true)
}

// deadliner is a connection whose blocked reads Shutdown can interrupt.
type deadliner interface{ SetReadDeadline(time.Time) error }

func (s *Server) serve(r io.Reader, w io.Writer, nc net.Conn, host bool) error {
	c := &conn{s: s, fr: newFrameReader(r), fixedHost: host,
		out: make(chan []byte, outQueue), written: make(chan struct{})}
	if nc != nil {
		c.dl = nc
	}
	go c.writer(w)
	defer func() {
		c.mu.Lock()
		c.closed = true
		close(c.out)
		c.mu.Unlock()
		<-c.written // every reply is out before the connection closes
	}()
	if host {
		c.role.Store(roleHost)
	}
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	return c.loop()
}

// begin counts a request in flight, or reports false once shutting down.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting {
		return false
	}
	s.inflight++
	return true
}

func (s *Server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if s.shutting && s.inflight == 0 {
		close(s.idle)
	}
}

// Shutdown stops accepting connections and requests, interrupts blocked
// socket reads, and waits for the requests in flight to finish (their
// replies are sent) or for ctx to end. It then closes the relay.Manager.
// The caller closes the mailbox afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.shutting {
		s.shutting = true
		if s.inflight == 0 {
			close(s.idle)
		}
	}
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		if c.dl != nil {
			c.dl.SetReadDeadline(time.Now())
		}
	}
	s.mu.Unlock()
	select {
	case <-s.idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mgr.Close()
	return nil
}

// hostNotifier sends relay notifications to every host connection as
// ui.notify. With no host connected the notification is not shown: its
// parent message and status entry are what remain, as in print mode.
type hostNotifier struct{ s *Server }

func (h hostNotifier) Notify(n relay.Notification) error {
	h.s.mu.Lock()
	hosts := make([]*conn, 0, 1)
	for c := range h.s.conns {
		if c.role.Load() == roleHost {
			hosts = append(hosts, c)
		}
	}
	h.s.mu.Unlock()
	var errs []error
	for _, c := range hosts {
		errs = append(errs, c.notify("ui.notify", uiNotify{Thread: n.Thread, Message: n.Text, NotifyType: string(n.Level)}))
	}
	return errors.Join(errs...)
}

// uiNotify is the params of the ui.notify notification (pi's notify request).
type uiNotify struct {
	Thread     string `json:"thread"`
	Message    string `json:"message"`
	NotifyType string `json:"notifyType"`
}

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
	dl        deadliner
	fixedHost bool
	role      atomic.Int32
	child     *binding // set by session.hello with a child token; loop goroutine only

	out     chan []byte // frames to write, newline included
	mu      sync.Mutex  // guards closed: no send on out after it is closed
	closed  bool
	written chan struct{} // closed when the writer has flushed everything
}

// outQueue is how many frames may wait for a slow peer. Replies wait for
// room (back-pressure on that peer alone); notifications are dropped.
const outQueue = 1024

func (c *conn) writer(w io.Writer) {
	defer close(c.written)
	bw := bufio.NewWriterSize(w, 16<<10)
	var failed bool
	for b := range c.out {
		if failed {
			continue // drain, so senders never block on a dead peer
		}
		_, err := bw.Write(b)
		if err == nil && len(c.out) == 0 {
			err = bw.Flush() // nothing else queued: send what we have in one write
		}
		if err != nil {
			failed = true
			c.s.logf("service: write: %v", err)
		}
	}
}

func (c *conn) loop() error {
	for {
		frame, err := c.fr.next()
		if errors.Is(err, errFrameTooLarge) {
			c.send(nullID, nil, errorf(CodeInvalidRequest, "frame over 64 KiB: the rest of the line was skipped"))
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) || c.isShutting() {
				return nil
			}
			return err
		}
		if !c.s.begin() {
			c.send(nullID, nil, errorf(CodeShuttingDown, "server is shutting down"))
			return nil
		}
		c.handle(frame)
		c.s.end()
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

// send queues a reply. It waits for room: a peer that does not read its
// replies slows only itself.
func (c *conn) send(id json.RawMessage, result any, rerr *rpcError) {
	resp := response{JSONRPC: "2.0", ID: id, Error: rerr}
	if rerr == nil {
		resp.Result = result
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: id, Error: errorf(CodeInternal, "encoding the reply: %v", err)})
	}
	c.out <- append(b, '\n') // only the loop goroutine sends replies, and only before out is closed
}

// errSlowPeer is returned when a notification is dropped because the peer
// has not read the frames queued before it.
var errSlowPeer = errors.New("service: peer is not reading; notification dropped")

// notify queues a server-to-peer notification without ever waiting.
func (c *conn) notify(method string, params any) error {
	b, err := json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	select {
	case c.out <- append(b, '\n'):
		return nil
	default:
		return errSlowPeer
	}
}
