package service

import (
	"sync"
	"sync/atomic"
)

// event is a signal given once, like a channel closed once, whose channel
// is made only for a goroutine that selects on it. A connection has four
// (conn.gone, stop, unpause, written) and most of them are only ever
// looked at, never waited for: as channels they were a third of an idle
// connection's heap (docs/performance.md, "The cost of a report"). The
// zero value is not yet given.
type event struct {
	set atomic.Bool
	mu  sync.Mutex
	ch  chan struct{} // nil until done is called; guarded by mu
}

// closedChan is the channel done returns for an event given before
// anyone waited.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// fire gives the event; it reports whether this call did (as the first
// close of a channel would), so that callers can act once.
func (e *event) fire() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.set.Load() {
		return false
	}
	e.set.Store(true)
	if e.ch != nil {
		close(e.ch)
	}
	return true
}

// isSet reports whether the event was given, without a channel.
func (e *event) isSet() bool { return e.set.Load() }

// done returns a channel closed when the event is given.
func (e *event) done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		if e.set.Load() {
			return closedChan
		}
		e.ch = make(chan struct{})
	}
	return e.ch
}
