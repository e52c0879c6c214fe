package service

import (
	"container/list"
	"context"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// Mailbox is what the server needs of a mailbox: the relay's Post, and the
// host's ReadPage and Ack. mailbox.Store and mailbox.Memory both fit.
type Mailbox interface {
	relay.Mailbox
	ReadPage(recipient string, limit int) (mailbox.Page, error)
	Ack(recipient string, ids []uint64) (int, error)
}

// Defaults of the connection bounds (docs/protocol.md, "Limits").
const (
	DefaultHelloTimeout     = 10 * time.Second
	DefaultMaxPending       = 64
	DefaultMaxConnsPerChild = 4
	DefaultMaxUnsent        = 1 << 20
	DefaultMaxNested        = 64
)

// Config configures a Server. Zero values mean the defaults.
type Config struct {
	Mode    relay.Mode // the parent session's mode; "" means rpc
	Mailbox Mailbox    // required
	// HostToken, if not empty, lets a socket peer become the host by
	// sending it in session.hello. The stdio peer is always the host.
	HostToken string

	// Now and AfterFunc are the clock, for the relay.Manager and for the
	// hello deadline; nil means the wall clock.
	Now         func() time.Time
	AfterFunc   func(d time.Duration, f func()) (stop func() bool)
	NotifyRate  rate.Limit // passed to the relay.Manager
	NotifyBurst int
	// NoRedaction turns secret redaction off (relay.Config.NoRedaction);
	// New logs a warning when it is set.
	NoRedaction bool

	// HelloTimeout is how long a socket peer may stay connected, from
	// accept and whatever it sends, without a successful session.hello.
	HelloTimeout time.Duration
	// MaxPending is how many socket peers may wait for their hello at
	// once; a new one closes the oldest.
	MaxPending int
	// MaxConnsPerChild is how many live connections one child token holds.
	MaxConnsPerChild int
	// MaxNested is how many live threads a top-level child may hold
	// below it, its nested children's nested children included; past it,
	// runtime.open gets -32007.
	MaxNested int
	// MaxUnsent is how many bytes of replies may wait to be written to a
	// socket peer; a peer over it is disconnected.
	MaxUnsent int
	// MaxUnsentTotal is how many bytes of replies and events may wait to
	// be written to all socket peers together; past it, the peers that
	// have gone longest without reading are disconnected, oldest first
	// (budget.go). 0 means DefaultMaxUnsentTotal.
	MaxUnsentTotal int
	// CostRate is a child token's share of the server's work, in bytes of
	// work a second, and CostBurst what it may spend at once (cost.go);
	// a pending peer gets an eighth of each. 0 means DefaultCostRate and
	// DefaultCostBurst.
	CostRate, CostBurst int
	// Workers is how many connections are served at once (the fair
	// scheduler's slots); 0 means GOMAXPROCS.
	Workers int

	// ReturnMemory is called once a flood (of connections, of unsent
	// bytes, of connects) has left, a second after and at most every 5 s,
	// to give the heap it grew back to the system (memreturn.go); nil
	// means a collection and debug.FreeOSMemory. It runs on the AfterFunc
	// goroutine, with no lock held.
	ReturnMemory func()

	// BindPeer binds every child token to its process (docs/protocol.md,
	// "Bound tokens") unless runtime.open says bind: false.
	BindPeer bool

	// Directory, if not nil, is the cluster's registry of tokens
	// (directory.go, docs/cluster.md): the server publishes its tokens
	// there, or, with Edge, claims the tokens its children bring. Edge
	// servers issue no tokens: runtime.open is refused.
	Directory Directory
	Edge      bool

	// Logger receives connection-level failures; nil discards them. Wrap
	// its handler in serve.NewLimitHandler (internal/serve) when the output
	// is a terminal.
	Logger *slog.Logger
}

// Stats counts what the bounds dropped.
type Stats struct {
	PendingEvicted       uint64 // pending peers closed to make room for a new one
	HelloTimeouts        uint64 // peers closed at the hello deadline
	SlowPeers            uint64 // socket peers disconnected over MaxUnsent
	OverBudget           uint64 // socket peers disconnected over MaxUnsentTotal, oldest non-reader first
	ConnLimited          uint64 // hellos refused with -32007
	NestedLimited        uint64 // nested runtime.opens refused with -32007
	RevokedClosed        uint64 // connections closed by revocation (reopen, close, a bound process's exit)
	NotificationsDropped uint64 // ui.notify frames a host did not read in time
	ForeignPeers         uint64 // socket peers of another user closed at accept
	PeerRefused          uint64 // hellos with a bound token from another process
	HostRefused          uint64 // hellos with the host token from a bound child's process
	MemoryReturns        uint64 // calls of Config.ReturnMemory after a flood left
}

// Server answers JSON-RPC 2.0, one object per line, for hosts and children.
// It is safe for concurrent use; each connection is served by one goroutine
// that handles its requests in order.
type Server struct {
	cfg      Config
	mgr      *relay.Manager
	tokens   *tokenTable
	log      *slog.Logger
	sched    *scheduler
	handlers handlers      // run the connections' frames (handlers.go)
	budget   *unsentBudget // MaxUnsentTotal, see budget.go
	events   *eventHub     // events.subscribe, see events.go
	peers    *peerTable    // bound tokens' processes, see bind.go
	mem      memReturn     // memory back after a flood, see memreturn.go

	// openMu makes runtime.open (Open, then bind its token) and
	// runtime.close (revoke, then Close) atomic with respect to each other,
	// so two hosts cannot leave a token bound to a replaced generation.
	openMu sync.Mutex

	mu        sync.Mutex
	conns     map[*conn]struct{}
	hosts     map[*conn]struct{} // socket peers that said hello as the host (bind.go)
	peakConns int                // most in conns since the last flood left (memreturn.go)
	pending   *list.List         // of *conn, oldest first: socket peers before hello
	listeners map[net.Listener]struct{}
	inflight  int
	shutting  bool
	idle      chan struct{} // closed when shutting and inflight == 0
	closing   chan struct{} // closed when Shutdown starts

	stats struct {
		pendingEvicted, helloTimeouts, slowPeers, overBudget, connLimited, nestedLimited, revokedClosed, notifyDropped atomic.Uint64
		foreignPeers, peerRefused, hostRefused, memoryReturns                                                          atomic.Uint64
	}
}

// New returns a Server with its own relay.Manager, whose notifications go
// to the connected hosts as ui.notify.
func New(c Config) *Server {
	orDefault(&c.HelloTimeout, DefaultHelloTimeout)
	orDefault(&c.MaxPending, DefaultMaxPending)
	orDefault(&c.MaxConnsPerChild, DefaultMaxConnsPerChild)
	orDefault(&c.MaxNested, DefaultMaxNested)
	orDefault(&c.MaxUnsent, DefaultMaxUnsent)
	orDefault(&c.MaxUnsentTotal, DefaultMaxUnsentTotal)
	orDefault(&c.CostRate, DefaultCostRate)
	orDefault(&c.CostBurst, DefaultCostBurst)
	orDefault(&c.Workers, runtime.GOMAXPROCS(0))
	if c.ReturnMemory == nil {
		c.ReturnMemory = returnMemory
	}
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	lg := c.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:       c,
		tokens:    newTokenTable(float64(c.CostRate), float64(c.CostBurst)),
		log:       lg,
		sched:     newScheduler(c.Workers),
		budget:    newUnsentBudget(c.MaxUnsentTotal),
		conns:     make(map[*conn]struct{}),
		hosts:     make(map[*conn]struct{}),
		pending:   list.New(),
		listeners: make(map[net.Listener]struct{}),
		idle:      make(chan struct{}),
		closing:   make(chan struct{}),
		events:    newEventHub(c.Now),
		peers:     newPeerTable(),
	}
	if c.Directory != nil {
		s.tokens.onRevoke = c.Directory.Revoked
	}
	s.mem.s = s
	s.budget.drained = s.mem.arm
	s.mgr = relay.NewManager(relay.Config{
		Mode:        c.Mode,
		Notifier:    hostNotifier{s},
		Mailbox:     c.Mailbox,
		Now:         c.Now,
		AfterFunc:   c.AfterFunc,
		NotifyRate:  c.NotifyRate,
		NotifyBurst: c.NotifyBurst,
		OnSinkError: func(err error) { s.log.Warn("sink failed", "err", err) },
		Observer:    s.events,
		NoRedaction: c.NoRedaction,
	})
	if c.NoRedaction {
		s.log.Warn("secret redaction is off: a child's token in a report reaches the parent verbatim (docs/redaction.md)")
	}
	return s
}

// orDefault sets a zero or negative limit of a Config to its default.
func orDefault[T int | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// Manager returns the relay.Manager behind the server.
func (s *Server) Manager() *relay.Manager { return s.mgr }

// Stats returns the counters of what the bounds dropped.
func (s *Server) Stats() Stats {
	return Stats{
		PendingEvicted:       s.stats.pendingEvicted.Load(),
		HelloTimeouts:        s.stats.helloTimeouts.Load(),
		SlowPeers:            s.stats.slowPeers.Load(),
		OverBudget:           s.stats.overBudget.Load(),
		ConnLimited:          s.stats.connLimited.Load(),
		NestedLimited:        s.stats.nestedLimited.Load(),
		RevokedClosed:        s.stats.revokedClosed.Load(),
		NotificationsDropped: s.stats.notifyDropped.Load(),
		ForeignPeers:         s.stats.foreignPeers.Load(),
		PeerRefused:          s.stats.peerRefused.Load(),
		HostRefused:          s.stats.hostRefused.Load(),
		MemoryReturns:        s.stats.memoryReturns.Load(),
	}
}

func (s *Server) maxConnsPerChild() int { return s.cfg.MaxConnsPerChild }

// overBudget disconnects c, a socket peer whose unsent frames the total
// budget no longer holds (budget.go).
func (s *Server) overBudget(c *conn) {
	if c.isGone() {
		return
	}
	s.budget.forget(c)
	s.stats.overBudget.Add(1)
	s.log.Info("disconnected a socket peer that does not read, over the total of unsent frames", "limit", s.cfg.MaxUnsentTotal)
	c.kill()
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// evictScan is how many of the oldest pending peers eviction looks at for
// one whose peer is already gone.
const evictScan = 8

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
	defer s.handlers.close()
	defer s.peers.closeAll()
	defer s.tokens.closeSpawns()
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
		if c.nc != nil {
			c.nc.SetReadDeadline(time.Now())
			c.nc.SetWriteDeadline(grace)
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
		case <-c.written.done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
