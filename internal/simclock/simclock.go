// Package simclock is a simulated clock: monotonic, moving only when told
// to, with timers that run when the clock passes them. It is the Now and
// AfterFunc of relay.Config for runs that are deterministic and instant:
// the demo's, and the tests'.
package simclock

import (
	"slices"
	"sync"
	"time"
)

// Clock is a simulated clock. Its methods are safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int // orders timers set for the same instant
	timers []*timer
}

type timer struct {
	at  time.Time
	d   time.Duration
	seq int
	f   func()
}

// New returns a Clock reading start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock reaches now+d; the returned
// func cancels it and reports whether it was still pending.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{at: c.now.Add(d), d: d, seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.timers, t)
		if i < 0 {
			return false
		}
		c.timers = slices.Delete(c.timers, i, i+1)
		return true
	}
}

// Advance moves the clock forward by d (see AdvanceTo).
func (c *Clock) Advance(d time.Duration) { c.AdvanceTo(c.Now().Add(d)) }

// AdvanceTo moves the clock forward to t. Each timer due on the way runs at
// its own instant, earliest first, with no lock held (it may set another
// timer, which runs too if it falls due before t). The clock never goes
// back: a t in the past only runs the timers already due.
func (c *Clock) AdvanceTo(t time.Time) {
	for {
		c.mu.Lock()
		i := c.nextLocked()
		if i < 0 || c.timers[i].at.After(t) {
			if t.After(c.now) {
				c.now = t
			}
			c.mu.Unlock()
			return
		}
		next := c.timers[i]
		c.timers = slices.Delete(c.timers, i, i+1)
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// Pending returns the delays the pending timers were set with, in the order
// they will run.
func (c *Clock) Pending() []time.Duration {
	c.mu.Lock()
	ts := slices.Clone(c.timers)
	c.mu.Unlock()
	slices.SortFunc(ts, func(a, b *timer) int {
		if r := a.at.Compare(b.at); r != 0 {
			return r
		}
		return a.seq - b.seq
	})
	ds := make([]time.Duration, len(ts))
	for i, t := range ts {
		ds[i] = t.d
	}
	return ds
}

func (c *Clock) nextLocked() int {
	best := -1
	for i, t := range c.timers {
		if best < 0 || t.at.Before(c.timers[best].at) ||
			t.at.Equal(c.timers[best].at) && t.seq < c.timers[best].seq {
			best = i
		}
	}
	return best
}
