package service

import (
	"container/list"
	"sync"
)

// DefaultMaxUnsentTotal is the default of Config.MaxUnsentTotal.
const DefaultMaxUnsentTotal = 16 << 20

// keepQueueCap is the largest write buffer a connection keeps between
// writes; a larger one, grown for a burst, is dropped once written, so an
// idle connection holds little and memory returns after a flood.
const keepQueueCap = 16 << 10

// unsentBudget is the one bound on bytes waiting to be written to every
// socket peer together (Config.MaxUnsentTotal), replies and events alike,
// beside each connection's own (Config.MaxUnsent). The stdio host is not
// counted: it is one peer, bounded by its own limit, and it cannot be
// disconnected.
//
// Connections with bytes counted are kept in the order of their writers'
// last progress, so the front is the peer that has gone longest without
// taking anything: the oldest non-reader. When a frame would pass the
// total, peers are disconnected from the front until it fits; when the
// front is the connection queueing the frame, that one goes.
type unsentBudget struct {
	max int

	// drained is called, with no lock held, when used is back to zero
	// after passing memFloodUnsent (memreturn.go).
	drained func()

	mu     sync.Mutex
	used   int
	peak   int        // most used since it last drained from over memFloodUnsent
	queued *list.List // of *conn with conn.budgeted > 0, oldest progress first
}

func newUnsentBudget(max int) *unsentBudget { return &unsentBudget{max: max, queued: list.New()} }

// take counts n more bytes for c, disconnecting older non-readers as
// needed, and reports whether they fit. The caller kills the victims
// (after its own locks are released).
func (b *unsentBudget) take(c *conn, n int) (ok bool, victims []*conn) {
	if c.nc == nil {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used+n > b.max {
		f := b.queued.Front()
		if f == nil || f.Value.(*conn) == c {
			break
		}
		v := f.Value.(*conn)
		b.forgetLocked(v)
		victims = append(victims, v)
	}
	if b.used+n > b.max && b.used > 0 {
		return false, victims
	}
	if c.budgetAt == nil {
		c.budgetAt = b.queued.PushBack(c)
	}
	c.budgeted += n
	b.used += n
	b.peak = max(b.peak, b.used)
	return true, victims
}

// wrote is told by c's writer that n bytes of c are no longer waiting: c
// moves to the back (it reads), or leaves the list with nothing counted.
func (b *unsentBudget) wrote(c *conn, n int) {
	if c.nc == nil || n == 0 {
		return
	}
	b.mu.Lock()
	if c.budgetAt == nil {
		b.mu.Unlock()
		return // forgotten: disconnected over the budget
	}
	d := min(n, c.budgeted)
	c.budgeted -= d
	b.used -= d
	if c.budgeted == 0 {
		b.queued.Remove(c.budgetAt)
		c.budgetAt = nil
	} else {
		b.queued.MoveToBack(c.budgetAt)
	}
	drained := b.drainedLocked()
	b.mu.Unlock()
	if drained {
		b.drained()
	}
}

// drainedLocked reports whether used is back to zero after a flood of
// unsent bytes, and starts counting the next.
func (b *unsentBudget) drainedLocked() bool {
	if b.used > 0 || b.peak < memFloodUnsent || b.drained == nil {
		return false
	}
	b.peak = 0
	return true
}

// forget stops counting c's bytes: it is disconnected, and its writer
// drops what it had.
func (b *unsentBudget) forget(c *conn) {
	b.mu.Lock()
	b.forgetLocked(c)
	drained := b.drainedLocked()
	b.mu.Unlock()
	if drained {
		b.drained()
	}
}

func (b *unsentBudget) forgetLocked(c *conn) {
	if c.budgetAt != nil {
		b.queued.Remove(c.budgetAt)
		c.budgetAt = nil
	}
	b.used -= c.budgeted
	c.budgeted = 0
}

// total is the bytes counted now.
func (b *unsentBudget) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
