package relay

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/capability/busprobe"
	"github.com/diagrelay/diagrelay/internal/ring"
	"github.com/diagrelay/diagrelay/threadpath"
)

// Mode is the parent session's mode: whether it has a UI for notifications.
type Mode string

const (
	ModeTUI   Mode = "tui"   // interactive terminal: UI notifications exist
	ModeRPC   Mode = "rpc"   // pi's RPC mode: notifications are notify requests
	ModePrint Mode = "print" // no UI: the parent message is the only path
)

// ParseMode returns the Mode named s, or an error naming the valid ones.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeTUI, ModeRPC, ModePrint:
		return m, nil
	}
	return "", fmt.Errorf("relay: mode %q is not tui, rpc or print", s)
}

// Defaults of the host-wide notification limit: 1 per second, bursts of 10.
const (
	DefaultNotifyRate  = rate.Limit(1)
	DefaultNotifyBurst = 10
)

// ErrClosed is returned by Open and Reopen once the Manager is closed.
var ErrClosed = errors.New("relay: closed")

// ErrRuntimeClosed is returned by Runtime.Report on a runtime that was
// closed or replaced by a newer generation (the report is ignored and not
// counted), and by Reopen on a replaced one. It matches ErrClosed too.
var ErrRuntimeClosed = fmt.Errorf("%w: runtime closed or replaced by a newer generation", ErrClosed)

// Config configures a Manager. The zero value is usable: rpc mode, no
// notifier, no mailbox, the wall clock and the default notification limit.
type Config struct {
	// Mode is the parent session's mode; "" means ModeRPC.
	Mode Mode
	// Notifier receives UI notifications; never called in ModePrint. Nil
	// means none are shown.
	Notifier Notifier
	// Mailbox receives the parent messages. Nil discards them, which is only
	// sensible in tests that look at Status alone.
	Mailbox Mailbox
	// Parent, if set, is the parent session's bus: while the Manager is
	// open it answers capability.CapabilitiesProbeTopic there.
	Parent *bus.Bus

	// Now is the clock: it must be monotonic (time.Now is). Nil means
	// time.Now. Reports never carry their own time. It is called with a
	// thread's lock held, so that a thread's reports are timed in the order
	// the gate sees them: it must not call into the Manager.
	Now func() time.Time
	// AfterFunc schedules the summary of notifications that the host-wide
	// limit held back and returns a func that cancels it. Nil means
	// time.AfterFunc. Tests inject a manual scheduler.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)

	// NotifyRate and NotifyBurst set the host-wide notification limit;
	// zero or less means the defaults (1/s, burst 10). rate.Inf disables it.
	NotifyRate  rate.Limit
	NotifyBurst int

	// OnSinkError, if set, is told of every failing or panicking sink call.
	// It runs on the reporting goroutine with no lock held.
	OnSinkError func(err error)

	// OnPanic, if set, is told when a handler on a child's bus (an
	// extension's, typically) panics; the bus recovered it and the other
	// handlers ran. Nil means the panic is only counted (Manager.Panics):
	// nothing is written to stderr, which may be the parent's terminal.
	OnPanic func(thread, topic string, recovered any)

	// Observer, if set, is told of every delivery, drop, held-back and
	// shown notification (see Observer).
	Observer Observer

	// NoRedaction turns secret redaction off (docs/redaction.md, "Switches"): reports are only
	// sanitized, and a child's token reaches the parent. Redaction is on by
	// default; a host that turns it off should say so (serve logs a
	// warning).
	NoRedaction bool
}

// Manager routes diagnostics from child runtimes to the parent session. It
// is safe for concurrent use. It starts no goroutines of its own; the only
// timer it sets is the host-wide summary of held-back notifications.
type Manager struct {
	mode        Mode
	notifier    Notifier
	mailbox     Mailbox
	now         func() time.Time
	afterFunc   func(time.Duration, func()) func() bool
	onSinkErr   func(error)
	onPanic     func(thread, topic string, recovered any)
	observer    Observer
	noRedaction bool

	mu        sync.Mutex
	threads   map[string]*thread
	closed    bool
	offParent func()

	toasts *toastLimiter

	sinkErrors atomic.Int64
	panics     atomic.Int64
}

// NewManager returns a Manager configured by c.
func NewManager(c Config) *Manager {
	m := &Manager{
		mode:        c.Mode,
		notifier:    c.Notifier,
		mailbox:     c.Mailbox,
		now:         c.Now,
		onSinkErr:   c.OnSinkError,
		onPanic:     c.OnPanic,
		observer:    c.Observer,
		noRedaction: c.NoRedaction,
		threads:     make(map[string]*thread),
	}
	if m.mode == "" {
		m.mode = ModeRPC
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.afterFunc = c.AfterFunc
	if m.afterFunc == nil {
		m.afterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	r, b := c.NotifyRate, c.NotifyBurst
	if r <= 0 {
		r = DefaultNotifyRate
	}
	if b <= 0 {
		b = DefaultNotifyBurst
	}
	m.toasts = newToastLimiter(r, b, m.now, m.afterFunc, m.notify, m.held)
	if c.Parent != nil {
		m.offParent = busprobe.Answer(c.Parent, capability.CapabilitiesProbeTopic)
	}
	return m
}

// SinkErrors returns how many sink calls have failed or panicked so far.
func (m *Manager) SinkErrors() int64 { return m.sinkErrors.Load() }

// Panics returns how many handlers on child buses have panicked so far.
func (m *Manager) Panics() int64 { return m.panics.Load() }

// Open starts a runtime for the child thread at path and returns it with
// its bus, on which the diagnostic probe responder and the report listener
// are already installed: extensions may load onto it at once.
//
// parent may be "" or must equal path's lexical parent. owner names the
// thread that created an independent root ("/k"); "" means "/root". Reports
// go to the lexical parent, or for a one-segment path to its owner; "/root"
// itself has neither and cannot be opened as a child.
//
// Opening a path whose runtime is live is a reopen (see Runtime.Reopen).
func (m *Manager) Open(path, parent, owner string) (*Runtime, error) {
	if err := threadpath.Validate(path); err != nil {
		return nil, err
	}
	lex := threadpath.LexicalParent(path)
	if parent != "" && parent != lex {
		return nil, fmt.Errorf("%w %q: parent %q is not its lexical parent %q", threadpath.ErrInvalid, path, threadpath.Clip(parent), lex)
	}
	if lex != "" {
		owner = "" // routing uses the parent; an owner would only mislead the status
	} else {
		if path == threadpath.Root {
			return nil, fmt.Errorf("%w %q: the parent session has no parent or owner to report to", threadpath.ErrInvalid, path)
		}
		if owner == "" {
			owner = threadpath.Root
		}
		if err := threadpath.Validate(owner); err != nil {
			return nil, fmt.Errorf("owner: %w", err)
		}
		if owner == path {
			return nil, fmt.Errorf("%w %q: a thread cannot own itself", threadpath.ErrInvalid, path)
		}
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	t := m.threads[path]
	if t == nil {
		t = &thread{path: path, parent: lex, owner: owner, diags: ring.New[Diagnostic](MaxStatusDiagnostics)}
		m.threads[path] = t
	}
	t.mu.Lock()
	t.owner = owner
	old := t.live
	r := m.startLocked(t)
	t.mu.Unlock()
	m.mu.Unlock()

	if old != nil {
		old.closeBus()
	}
	return r, nil
}

// Status returns the thread's status, and false if the Manager has never
// opened path.
func (m *Manager) Status(path string) (Status, bool) {
	t := m.lookup(path)
	if t == nil {
		return Status{}, false
	}
	return t.status(), true
}

// lookup is the thread at path, nil if the Manager has never opened it.
func (m *Manager) lookup(path string) *thread {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.threads[path]
}

// Close closes every live runtime, stops answering the capabilities probe
// and cancels a pending summary. Statuses stay readable. Open fails after.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	var live []*Runtime
	for _, t := range m.threads {
		t.mu.Lock()
		if t.live != nil {
			live = append(live, t.live)
		}
		t.mu.Unlock()
	}
	off := m.offParent
	m.mu.Unlock()

	if off != nil {
		off()
	}
	for _, r := range live {
		r.Close()
	}
	m.toasts.stop()
}
