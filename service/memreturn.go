package service

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Giving back the memory a flood left (service/doc.go, "Memory returns").
// Go's runtime keeps the heap a flood grew: with no allocation after it,
// no collection runs (the heap goal set at the flood's peak is not
// reached; the forced one comes after 2 minutes), and the background
// scavenger keeps about that goal resident. So once a flood of
// connections or of unsent bytes has left, the server collects and
// returns the free heap itself, a moment after (the last connections'
// goroutines end) and at most once per memReturnEvery, whatever a peer
// does, so a connect churn cannot turn it into a CPU cost.
const (
	// memReturnDelay is how long after a flood leaves the memory is
	// returned: its last connections close within it, so one call covers
	// them all.
	memReturnDelay = time.Second
	// memReturnEvery is the least time between two returns: the two
	// collections cost about 32 ms of CPU on serve after a flood, so
	// at most about 0.6 % of a core.
	memReturnEvery = 5 * time.Second
	// memFloodConns: the connection count has fallen by at least this
	// many, and to at most half its peak since the last return. Fewer
	// leaving is ordinary life and holds little (a connection costs a
	// few KiB: jsonframe's read buffer, keepQueueCap, two goroutines).
	memFloodConns = 16
	// memFloodUnsent: the unsent total (budget.go) went over this since
	// the last return and is back to zero.
	memFloodUnsent = 4 << 20
	// memChurnAccepts: this many connections accepted since the last
	// return (a connect churn, whose connections live too briefly to
	// raise the count) arms a return for when the churn has stopped.
	memChurnAccepts = 4096
	// memQuietAccepts: more accepts than this in the memReturnDelay
	// before a return is due mean the flood goes on; the return waits
	// another memReturnDelay (a flood that reconnects is returned for
	// once it has left, not each time a part of it is disconnected).
	memQuietAccepts = 16
)

// memReturn schedules ReturnMemory: armed by a flood leaving, fired
// through Config.AfterFunc (the injected clock).
type memReturn struct {
	s        *Server
	accepted atomic.Uint64 // connections accepted, by Server.Serve
	churnAt  atomic.Uint64 // accepted when a churn last armed
	mu       sync.Mutex
	armed    bool      // a call is scheduled
	seen     uint64    // accepted when armed or last fired
	last     time.Time // of the last return; zero before the first
}

// returnMemory is the default Config.ReturnMemory. Two collections: the
// first moves every sync.Pool's buffers (the sanitizer's, up to 2 MiB
// each) to the pools' victim caches, the second, FreeOSMemory's, frees
// them and returns every free span to the system.
func returnMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// accept counts a connection accepted by Serve, arming a return after
// memChurnAccepts of them.
func (m *memReturn) accept() {
	n := m.accepted.Add(1)
	if n-m.churnAt.Load() >= memChurnAccepts {
		m.churnAt.Store(n)
		m.arm()
	}
}

// arm schedules a return memReturnDelay from now, unless one is.
func (m *memReturn) arm() {
	m.mu.Lock()
	if m.armed {
		m.mu.Unlock()
		return
	}
	m.armed = true
	m.seen = m.accepted.Load()
	m.mu.Unlock()
	m.s.cfg.AfterFunc(memReturnDelay, m.fire)
}

// fire returns the memory once connections have stopped arriving and
// memReturnEvery has passed since the last return; until then it looks
// again later.
func (m *memReturn) fire() {
	if isClosed(m.s.closing) {
		return // the process is ending: nothing to keep lean for
	}
	now, n := m.s.now(), m.accepted.Load()
	m.mu.Lock()
	busy := n-m.seen > memQuietAccepts
	m.seen = n
	if busy {
		m.mu.Unlock()
		m.s.cfg.AfterFunc(memReturnDelay, m.fire)
		return
	}
	if wait := m.last.Add(memReturnEvery).Sub(now); !m.last.IsZero() && wait > 0 {
		m.mu.Unlock()
		m.s.cfg.AfterFunc(wait, m.fire)
		return
	}
	m.last, m.armed = now, false
	m.mu.Unlock()
	m.s.cfg.ReturnMemory()
	m.s.stats.memoryReturns.Add(1)
}

// connsLeft is told by Server.forget that n connections remain and the
// most since the last flood was peak (Server.mu held); it reports whether
// a flood of connections has left, and then what the peak becomes.
func connsLeft(n, peak int) (flood bool, newPeak int) {
	if peak-n >= memFloodConns && n <= peak/2 {
		return true, n
	}
	return false, peak
}
