package service

import (
	"sync"
	"sync/atomic"
)

// Why a frame is handled on a goroutine other than its connection's
// (docs/performance.md, "The cost of a report"): a connection's loop
// goroutine spends nearly all its life parked in a read, and with 10,000
// children connected their stacks are most of the service's memory. A
// goroutine's stack starts at 2 KiB and grows when a call goes deeper; the
// runtime shrinks it again only while it is parked at less than a quarter
// of its size, counting the 800 bytes it keeps free, which a parked read
// never is. So a loop that handled its own frames (the relay, the gate,
// the mailbox's commit: several KiB deep) kept 4 KiB or more for as long
// as its peer stayed connected. The loop reads a frame and hands it to a
// handler, whose deep stack serves one connection after another, and
// stays at 2 KiB.
//
// That memory matters only with thousands connected, and the hand-off has
// a price of its own: the handler waits in the commit's fdatasync, and
// handing a frame to a goroutine and its reply back wakes an idle thread
// each way, which on a machine of few cores takes its time from the
// children: a server doing nothing but a line, an fdatasync and a reply
// reached 0.59-0.70 of the disk's fsyncs/s without the hand-off and
// 0.39-0.42 with it, and a lone child's reports 0.26-0.28 with both
// hand-offs and 0.32-0.35 without (docs/performance.md, "The cost of a
// report"). So the first maxOwnHandlers connections served at a time,
// pending ones included, handle their frames on their own loop
// (conn.ownHandler), and only the others hand them off. Which ones do changes nothing but this
// cost: the same code runs either way.

// maxOwnHandlers is how many connections at a time handle their own
// frames: their loops' stacks may stay at 4-16 KiB each while they are
// connected (at most half a MiB), as an idle handler's does.
const maxOwnHandlers = 32

// maxIdleHandlers is how many handlers wait for a frame once the frames in
// flight have fallen: enough for the frames that wait for one commit
// together, at 4-16 KiB of stack each (at most about 4 MiB); beyond it a
// handler ends.
const maxIdleHandlers = 256

// handlers are the goroutines that run frames for the connections' loops.
type handlers struct {
	mu     sync.Mutex
	idle   []*handler
	closed bool // Shutdown: no handler waits any more

	own atomic.Int32 // connections that handle their own frames now
}

// handler is one goroutine handling one frame at a time, given by run.
type handler struct {
	work chan handlerJob
	done chan []byte
}

type handlerJob struct {
	c     *conn
	frame []byte
}

// run handles frame for c on a handler and returns its encoded reply (nil
// for a notification), as c.handle does. Only c's loop calls it, and it
// returns once the handler is done with frame, which the loop then reuses.
func (h *handlers) run(c *conn, frame []byte) []byte {
	if c.ownHandler {
		return c.handle(frame)
	}
	w := h.get()
	w.work <- handlerJob{c: c, frame: frame}
	reply := <-w.done
	h.put(w)
	return reply
}

// claimOwn reports whether a connection starting to be served may handle
// its own frames (at most maxOwnHandlers at a time); if so, releaseOwn
// must follow when it ends.
func (h *handlers) claimOwn() bool {
	if h.own.Add(1) <= maxOwnHandlers {
		return true
	}
	h.own.Add(-1)
	return false
}

func (h *handlers) releaseOwn() { h.own.Add(-1) }

func (h *handlers) get() *handler {
	h.mu.Lock()
	if n := len(h.idle); n > 0 {
		w := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		h.mu.Unlock()
		return w
	}
	h.mu.Unlock()
	w := &handler{work: make(chan handlerJob), done: make(chan []byte)}
	go w.serve()
	return w
}

// put makes w idle, or ends it when enough are idle or the server is
// shut down.
func (h *handlers) put(w *handler) {
	h.mu.Lock()
	if !h.closed && len(h.idle) < maxIdleHandlers {
		h.idle = append(h.idle, w)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	close(w.work)
}

// close ends the idle handlers, and every other one as it comes back.
func (h *handlers) close() {
	h.mu.Lock()
	idle := h.idle
	h.idle, h.closed = nil, true
	h.mu.Unlock()
	for _, w := range idle {
		close(w.work)
	}
}

func (w *handler) serve() {
	for j := range w.work {
		w.done <- j.c.handle(j.frame)
	}
}
