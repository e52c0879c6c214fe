package relay

import (
	"sync"
	"time"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/capability/busprobe"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/ring"
	"github.com/diagrelay/diagrelay/threadpath"
)

// thread is what outlives a runtime: the status of one thread path.
type thread struct {
	path, parent, owner string

	mu    sync.Mutex // guards the fields below and the live runtime's gate
	gen   uint64
	live  *Runtime
	diags ring.Ring[Diagnostic] // the newest MaxStatusDiagnostics
	// dropped sums the drops of the closed generations' gates; the live
	// one's are added when read. The gates are the one count of drops.
	dropped diag.Dropped
	// redacted sums the secrets redacted from delivered reports.
	redacted diag.Redacted

	// Cluster homes only (remote.go): the edge that last admitted a report
	// of the thread, and the edges' counts by (edge, boot).
	edge         string
	remote       map[[2]string]RemoteCounts
	remoteFolded RemoteCounts
}

// deliveredLocked records a delivered report in the status: its entry and
// the secrets redacted from it, by rule.
func (t *thread) deliveredLocked(rep diag.Report, found map[string]int, at time.Time) {
	t.diags.Push(Diagnostic{Level: rep.Level, Source: rep.Source, Message: rep.Message, At: at})
	for id, n := range found {
		if t.redacted == nil {
			t.redacted = make(diag.Redacted, len(found))
		}
		t.redacted[id] += n
	}
}

// droppedLocked is every drop of every generation: the closed ones' sums
// and the live gate's counts.
func (t *thread) droppedLocked() diag.Dropped {
	d := t.dropped.Plus(t.remoteSumLocked().Dropped)
	if t.live != nil && t.live.gate != nil {
		return d.Plus(t.live.gate.Counts().Dropped)
	}
	return d
}

func (t *thread) status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Status{
		Path:        t.path,
		Parent:      t.parent,
		Owner:       t.owner,
		Open:        t.live != nil,
		Generation:  t.gen,
		Diagnostics: t.diags.AppendOldestFirst(make([]Diagnostic, 0, t.diags.Len())),
		Dropped:     t.droppedLocked(),
		Redacted:    plusRedacted(t.redacted, t.remoteSumLocked().Redacted),
		Edge:        t.edge,
	}
	return s
}

// Runtime is one live generation of a child session: its bus and its limits.
type Runtime struct {
	m         *Manager
	t         *thread
	gen       uint64
	recipient string // parent ?? owner as of this generation's start

	// Guarded by t.mu. The gate is made on the first report, and the bus
	// at the first Bus call, so an idle runtime costs little, and one
	// whose child reports over a socket (the service's) never has a bus:
	// with 10,000 threads open their buses and subscriptions were a
	// sixth of serve's memory (docs/performance.md, "The cost of a
	// report").
	gate   *diag.Gate
	b      *bus.Bus
	closed bool
}

// startLocked makes the thread's next generation live, closing the current
// one's state (its bus is closed by the caller, outside the locks). Called
// with m.mu and t.mu held.
func (m *Manager) startLocked(t *thread) *Runtime {
	if old := t.live; old != nil {
		old.retireLocked()
	}
	t.gen++
	r := &Runtime{m: m, t: t, gen: t.gen, recipient: threadpath.Recipient(t.parent, t.owner)}
	t.live = r
	return r
}

// busLocked returns the runtime's bus, making it on the first call with
// the diagnostic probe's responder and the report listener on it, closed
// already if the runtime is. Called with t.mu held: no handler runs here.
func (r *Runtime) busLocked() *bus.Bus {
	if r.b != nil {
		return r.b
	}
	m, path := r.m, r.t.path
	b := bus.New()
	b.SetPanicHook(func(topic string, v any) {
		m.panics.Add(1)
		if m.onPanic != nil {
			m.onPanic(path, topic, v) // the bus recovers a panic here too
		}
	})
	busprobe.Answer(b, capability.DiagnosticProbeTopic)
	b.On(diag.Topic, func(p any) { r.Report(p) })
	if r.closed {
		b.Close()
	}
	r.b = b
	return b
}

// closeBus closes the runtime's bus, if it has one, after retireLocked:
// a bus made later is made closed. Called without t.mu, as Bus.Close
// must be.
func (r *Runtime) closeBus() {
	r.t.mu.Lock()
	b := r.b
	r.t.mu.Unlock()
	if b != nil {
		b.Close()
	}
}

// retireLocked closes r for reports and folds its gate's drops into the
// thread's. Called with t.mu held; idempotent.
func (r *Runtime) retireLocked() {
	if r.closed {
		return
	}
	r.closed = true
	if r.gate != nil {
		r.t.dropped = r.t.dropped.Plus(r.gate.Counts().Dropped)
	}
}

// Bus returns the runtime's own bus, for the child's extensions: the
// same bus at every call, with the diagnostic probe's responder and the
// report listener on it, closed once the runtime is.
func (r *Runtime) Bus() *bus.Bus {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	return r.busLocked()
}

// Path returns the child's thread path.
func (r *Runtime) Path() string { return r.t.path }

// Generation returns which opening of the thread this runtime is (from 1).
func (r *Runtime) Generation() uint64 { return r.gen }

// Report runs one report payload through the same path as an event on the
// runtime's bus: parse, sanitize, gate, deliver. It returns the gate's
// verdict, and an error when Parse refused the payload (it matches
// diag.ErrInvalid and says why; the verdict is DropInvalid), when the
// runtime is closed or replaced (ErrRuntimeClosed and the zero Verdict: the
// report is ignored and not counted), or when a delivered report could not
// be stored in the mailbox; the gate then forgets it, so the child's retry
// is not a duplicate. A failed notification is recorded, not returned: the
// mailbox is the durable path.
func (r *Runtime) Report(payload any) (diag.Verdict, error) {
	// Parsing sanitizes and redacts, the costly steps: it runs before the
	// lock.
	rep, found, parseErr := diag.ParseWith(payload, r.m.parseOptions())
	t := r.t
	t.mu.Lock()
	// The clock is read under the lock, so that reports on one runtime
	// reach the gate in the order of their times: read before it, a report
	// that lost the race for the lock would look like a clock going
	// backwards and be dropped.
	now := r.m.now()
	if r.closed {
		t.mu.Unlock()
		return 0, ErrRuntimeClosed
	}
	if r.gate == nil {
		r.gate = diag.NewGate()
	}
	if parseErr != nil {
		rep = diag.Report{} // invalid: the gate counts it as DropInvalid
	}
	v := r.gate.Admit(rep, now)
	if v != diag.Delivered {
		t.mu.Unlock()
		r.m.observe(Observation{Kind: ObservedDrop, Thread: t.path, At: now, Verdict: v})
		return v, parseErr
	}
	t.deliveredLocked(rep, found, now)
	t.mu.Unlock()
	r.m.observe(Observation{Kind: ObservedDelivery, Thread: t.path, At: now, Report: rep, Redacted: found})
	postErr := r.m.deliver(r, rep, now)
	if postErr != nil {
		// The parent never got it: let the child's retry through rather
		// than drop it as a duplicate. Its window slot stays used.
		t.mu.Lock()
		r.gate.Forget(rep)
		t.mu.Unlock()
	}
	return v, postErr
}

// Reopen starts the thread's next generation, as when a retained session is
// opened again: a new bus with fresh limits. This runtime is closed first;
// reports still arriving on its bus are ignored. The thread's status,
// diagnostics included, carries over. Reopen works on the thread's latest
// runtime, live or closed; on one that a newer generation replaced it
// returns ErrRuntimeClosed, and ErrClosed once the Manager is closed.
func (r *Runtime) Reopen() (*Runtime, error) {
	m, t := r.m, r.t
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	t.mu.Lock()
	if t.gen != r.gen {
		t.mu.Unlock()
		m.mu.Unlock()
		return nil, ErrRuntimeClosed
	}
	next := m.startLocked(t)
	t.mu.Unlock()
	m.mu.Unlock()
	r.closeBus()
	return next, nil
}

// Close ends the runtime after the child's shutdown hooks have run: the
// listener goes, the bus is closed, and reports emitted later are ignored.
// The thread's status stays. Close is idempotent.
func (r *Runtime) Close() {
	t := r.t
	t.mu.Lock()
	r.retireLocked()
	if t.live == r {
		t.live = nil
	}
	t.mu.Unlock()
	r.closeBus()
}
