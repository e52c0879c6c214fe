package relay

import (
	"sort"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// ObservationKind says what an Observation is about.
type ObservationKind uint8

const (
	// ObservedDelivery: a report passed the gate (Observation.Report). It
	// is observed before it reaches the sinks.
	ObservedDelivery ObservationKind = iota + 1
	// ObservedDrop: a report did not pass the gate (Observation.Verdict
	// says why).
	ObservedDrop
	// ObservedHeld: the host-wide limit held a notification back
	// (Observation.Notification); a later summary counts it.
	ObservedHeld
	// ObservedNotification: a notification went to the Notifier, the
	// held-back summary (Notification.Thread "") included.
	ObservedNotification
)

// Observation is one thing the relay did, for a watcher. Thread is the
// reporting thread, "" for the summary; At is the relay's clock.
type Observation struct {
	Kind         ObservationKind
	Thread       string
	At           time.Time
	Report       diag.Report   // ObservedDelivery
	Redacted     diag.Redacted // ObservedDelivery: the secrets redacted from Report, by rule; nil if none
	Verdict      diag.Verdict  // ObservedDrop
	Notification Notification  // ObservedHeld, ObservedNotification
	Edge         string        // ObservedDelivery: the cluster edge that admitted it; "" if local
}

// Observer is told of what the relay does (Config.Observer). Observe runs
// on the reporting goroutine (or the summary timer's) with no lock of the
// relay held, so it must return quickly and never block: a watcher queues
// what it needs and drops what it cannot keep.
type Observer interface {
	Observe(o Observation)
}

// observe tells the observer, if any, and is a no-op otherwise.
func (m *Manager) observe(o Observation) {
	if m.observer != nil {
		m.observer.Observe(o)
	}
}

// ThreadSummary is a thread's status without its diagnostics: what a view
// of the whole session lists.
type ThreadSummary struct {
	Path, Parent, Owner string
	Open                bool
	Generation          uint64
	Diagnostics         int // how many the status holds, at most MaxStatusDiagnostics
	Dropped             diag.Dropped
	Redacted            diag.Redacted // secrets redacted from its delivered reports, by rule
	Edge                string        // Status.Edge
}

// Thread returns the summary of the thread at path, and false if the
// Manager has never opened it.
func (m *Manager) Thread(path string) (ThreadSummary, bool) {
	t := m.lookup(path)
	if t == nil {
		return ThreadSummary{}, false
	}
	return t.summary(), true
}

func (t *thread) summary() ThreadSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return ThreadSummary{Path: t.path, Parent: t.parent, Owner: t.owner,
		Open: t.live != nil, Generation: t.gen, Diagnostics: t.diags.Len(), Dropped: t.droppedLocked(),
		Redacted: plusRedacted(t.redacted, t.remoteSumLocked().Redacted), Edge: t.edge}
}

// Threads returns a summary of every thread the Manager has opened, sorted
// by path.
func (m *Manager) Threads() []ThreadSummary {
	m.mu.Lock()
	ts := make([]*thread, 0, len(m.threads))
	for _, t := range m.threads {
		ts = append(ts, t)
	}
	m.mu.Unlock()
	out := make([]ThreadSummary, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.summary())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
