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

	// HelloTimeout is how long a socket peer may stay connected without a
	// successful session.hello; zero means DefaultHelloTimeout.
	HelloTimeout time.Duration

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
	events *eventHub // events.subscribe, see events.go

	// openMu makes runtime.open (Open, then bind its token) and
	// runtime.close (revoke, then Close) atomic with respect to each other,
	// so two hosts cannot leave a token bound to a replaced generation.
	openMu sync.Mutex

	mu        sync.Mutex
	conns     map[*conn]struct{}
	listeners map[net.Listener]struct{}
	inflight  int
	shutting  bool
	idle      chan struct{} // closed when shutting and inflight == 0
	closing   chan struct{} // closed when Shutdown starts
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
		closing:   make(chan struct{}),
		events:    newEventHub(c.Now),
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
		Observer:    s.events,
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

// Serve accepts socket peers on l until Shutdown, which closes l. A socket
// peer starts unauthenticated: it must send session.hello with a child
// token (or the host token) within Config.HelloTimeout. Accept errors other than
// l being closed are logged and retried after a pause (up to a second), as
// a full file table is no reason to stop serving everyone else.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	var pause time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
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
			s.logf("service: accept: %v; retrying in %v", err, pause)
			select {
			case <-time.After(pause):
			case <-s.closing:
			}
			continue
		}
		pause = 0
		go func() {
			defer nc.Close()
			s.serve(nc, nc, nc, false)
		}()
	}
}

// DefaultHelloTimeout is how long a socket peer may stay connected without
// a successful session.hello, unless Config.HelloTimeout says otherwise.
const DefaultHelloTimeout = 10 * time.Second

// ServeHost serves the host on r and w (normally stdin and stdout) until r
// ends or Shutdown. The stdio peer is the host without any hello.
func (s *Server) ServeHost(r io.Reader, w io.Writer) error {
	return s.serve(r, w, nil, true)
}

// deadliner is a connection whose blocked reads and writes Shutdown can
// interrupt.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

func (s *Server) serve(r io.Reader, w io.Writer, nc net.Conn, host bool) error {
	c := &conn{s: s, fr: newFrameReader(r), fixedHost: host,
		out: make(chan []byte, outQueue), stop: make(chan struct{}), written: make(chan struct{})}
	if nc != nil {
		c.dl = nc
		hello := s.cfg.HelloTimeout
		if hello <= 0 {
			hello = DefaultHelloTimeout
		}
		nc.SetReadDeadline(time.Now().Add(hello)) // cleared by a successful hello
	}
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
	go c.writer(w)
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.finish() // every queued reply is out before the connection closes
		if c.dl != nil {
			// A peer that stopped reading gets a few seconds, not forever.
			c.dl.SetWriteDeadline(time.Now().Add(5 * time.Second))
		}
		<-c.written
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
// socket reads, waits for the requests in flight to finish, then for every
// reply queued to be written, or for ctx to end. It closes the
// relay.Manager either way; the caller closes the mailbox afterwards (its
// Close waits for writes still under way). A socket peer that does not read
// its replies gets until ctx's deadline (or 5 s) before its writes fail.
func (s *Server) Shutdown(ctx context.Context) error {
	defer s.mgr.Close()
	grace := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok {
		grace = d
	}
	s.mu.Lock()
	if !s.shutting {
		s.shutting = true
		close(s.closing)
		if s.inflight == 0 {
			close(s.idle)
		}
	}
	for l := range s.listeners {
		l.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
		if c.dl != nil {
			c.dl.SetReadDeadline(time.Now())
			c.dl.SetWriteDeadline(grace)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Nothing is in flight, so every reply is queued: write them out.
	for _, c := range conns {
		c.finish()
	}
	for _, c := range conns {
		select {
		case <-c.written:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
	dl        deadliner // nil for the stdio host
	fixedHost bool
	role      atomic.Int32
	child     *binding // set by session.hello with a child token; loop goroutine only

	out      chan []byte   // frames to write, newline included
	stop     chan struct{} // closed by finish: write what is queued, then end
	stopOnce sync.Once
	written  chan struct{} // closed when the writer has ended
}

// outQueue is how many frames may wait for a slow peer. Replies wait for
// room (back-pressure on that peer alone) until shutdown; notifications
// are dropped.
const outQueue = 1024

// finish tells the writer to write what is queued and end. Frames queued
// after it may be lost.
func (c *conn) finish() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *conn) writer(w io.Writer) {
	defer close(c.written)
	bw := bufio.NewWriterSize(w, 16<<10)
	failed := false
	write := func(b []byte) {
		if failed {
			return
		}
		_, err := bw.Write(b)
		if err == nil && len(c.out) == 0 {
			err = bw.Flush() // nothing else queued: send what we have in one write
		}
		if err != nil {
			failed = true // from here on, frames are dropped: the peer is gone
			c.s.logf("service: write: %v", err)
		}
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

// send queues a reply. It waits for room, so a peer that does not read its
// replies slows only itself, until shutdown, when the reply is dropped
// instead (that peer was not reading it).
func (c *conn) send(id json.RawMessage, result any, rerr *rpcError) {
	resp := response{JSONRPC: "2.0", ID: id, Error: rerr}
	if rerr == nil {
		resp.Result = result
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: id, Error: errorf(CodeInternal, "encoding the reply: %v", err)})
	}
	b = append(b, '\n')
	select {
	case c.out <- b:
		return
	default:
	}
	select {
	case c.out <- b:
	case <-c.s.closing:
	case <-c.stop:
	}
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
	select {
	case <-c.stop:
		return nil // the connection is ending
	default:
	}
	select {
	case c.out <- append(b, '\n'):
		return nil
	default:
		return errSlowPeer
	}
}
