package service

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// Sending to a peer: the bounded queue of replies and notifications, and
// the one writer goroutine a connection has while it has anything queued.

// writer writes what is queued, a batch at a time straight from the
// queue's buffer: the bytes counted are the bytes held (no per-frame
// allocations, no copy into a second buffer). A failed write to a socket
// peer disconnects it: its peer is gone, so nothing more is read either.
//
// It runs only while there is something to write (startWriter): an idle
// connection has one goroutine, its loop, not two (with 10,000 children
// connected the writers' goroutines were a fifth of serve's memory). After
// finish it writes what is left and closes written.
func (c *conn) writer() {
	var spare []byte
	for {
		c.qmu.Lock()
		batch := c.queue
		if len(batch) == 0 {
			if batch == nil && c.ownHandler && cap(spare) <= keepIdleQueueCap {
				c.queue = spare // the next reply's room, not an allocation
			}
			c.writing = false
			ended := c.stop.isSet()
			c.ended = ended
			c.qmu.Unlock()
			if ended {
				c.written.fire()
			}
			return
		}
		c.queue = spare
		c.qmu.Unlock()
		if !c.writeFailed {
			if _, err := c.out.Write(batch); err != nil {
				c.writeFailed = true // from here on, frames are dropped: the peer is gone
				if c.fixedHost {
					c.s.log.Warn("writing to the host failed", "err", err)
				} else {
					c.s.log.Debug("writing to a socket peer failed", "err", err)
					c.kill()
				}
			}
		}
		n := len(batch)
		c.qmu.Lock()
		c.unsent -= n
		c.qmu.Unlock()
		c.s.budget.wrote(c, n)
		spare = nil
		if cap(batch) <= keepQueueCap {
			spare = batch[:0]
		}
		select {
		case c.room <- struct{}{}:
		default:
		}
	}
}

// keepIdleQueueCap is the largest write buffer an idle connection keeps
// for its next frames (a reply is about 40 bytes). Only connections that
// handle their own frames keep one (at most maxOwnHandlers: the busy
// ones, as a rule); the many others allocate each reply's, which at
// 10,000 children saves 1.6 MB.
const keepIdleQueueCap = 512

// startWriting writes what was just queued (c.writing set by
// startWriterLocked): from the calling goroutine if mayWrite and the
// socket takes all of it at once, else on a writer goroutine. Most
// replies are one small frame to a peer that reads, and writing it here
// spares a goroutine's start and its hand-off to another thread per reply
// (docs/performance.md, "The cost of a report"). It never waits: a peer
// that does not read gets what is left from the writer, bounded as
// before.
func (c *conn) startWriting(mayWrite bool) {
	if !mayWrite || c.tryWrite == nil || !c.writeNow() {
		go c.writer()
	}
}

// writeNow makes one attempt, that never waits, to write the whole queue,
// and reports whether it is done: nothing is left to write and c.writing
// is cleared. False leaves c.writing set, what the socket did not take
// first in the queue, for the writer to start on. A failed write is left
// to the writer too, which meets the failure again and disconnects the
// peer; so is everything once finish was called, for the writer then
// closes written.
func (c *conn) writeNow() bool {
	c.qmu.Lock()
	batch := c.queue
	if len(batch) == 0 || c.stop.isSet() || c.writeFailed {
		c.qmu.Unlock()
		return false
	}
	c.queue = nil
	c.qmu.Unlock()
	n, err := c.tryWrite(batch)
	if err != nil {
		n = 0
	}
	c.qmu.Lock()
	c.unsent -= n
	done := n == len(batch) && len(c.queue) == 0 && !c.stop.isSet()
	switch {
	case done:
		if c.ownHandler && cap(batch) <= keepIdleQueueCap {
			c.queue = batch[:0] // the next reply's room, not an allocation
		}
		c.writing = false
	case len(c.queue) == 0:
		c.queue = batch[n:]
	default: // queued meanwhile: after what is left of batch
		c.queue = append(batch[n:len(batch):len(batch)], c.queue...)
	}
	c.qmu.Unlock()
	c.s.budget.wrote(c, n)
	return done
}

// startWriterLocked reports whether a writer must be started for what
// was just queued (or for finish), and marks it running. c.qmu held.
func (c *conn) startWriterLocked() bool {
	if c.writing || c.ended {
		return false
	}
	c.writing = true
	return true
}

// encodeReply encodes a response line. Every string in it is valid UTF-8
// (the frame was checked, and encoding/json replaces invalid bytes), so
// the line is valid UTF-8 JSON.
func encodeReply(id json.RawMessage, result any, rerr *wire.Error) []byte {
	if _, empty := result.(wire.Empty); empty && rerr == nil && plainID(id) {
		// Every admitted report's reply: the bytes json.Marshal writes
		// for it, without its reflection.
		b := make([]byte, 0, len(emptyReplyHead)+len(id)+len(emptyReplyTail))
		return append(append(append(b, emptyReplyHead...), id...), emptyReplyTail...)
	}
	resp := wire.Response{JSONRPC: wire.Version, ID: id, Error: rerr}
	if rerr == nil {
		resp.Result = result
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(wire.Response{JSONRPC: wire.Version, ID: id, Error: wire.Errorf(wire.CodeInternal, "the reply could not be encoded")})
	}
	return append(b, '\n')
}

const (
	emptyReplyHead = `{"jsonrpc":"` + wire.Version + `","id":`
	emptyReplyTail = `,"result":{}}` + "\n"
)

// plainID reports whether json.Marshal writes id as it is: valid JSON
// with nothing it escapes (<, >, & and U+2028, U+2029 in strings).
func plainID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.ContainsAny(id, "<>&\u2028\u2029") && json.Valid(id)
}

// push queues b unless that would pass Config.MaxUnsent, and reports
// whether it did. An empty queue always takes b. Past the server's total
// (Config.MaxUnsentTotal), older non-readers are disconnected first, and
// c itself when it is the oldest.
//
// Only the loop pushes its replies, and it writes them itself only when
// it handles its own frames: the write's calls would grow a loop's stack
// past its 2 KiB for as long as the peer stays connected (handlers.go).
func (c *conn) push(b []byte) bool { return c.pushWithin(b, c.s.cfg.MaxUnsent, true, c.ownHandler) }

// pushWithin is push with a bound of max unsent bytes; when the total is
// passed and c is the oldest non-reader, c is disconnected if evictSelf,
// and b is only refused otherwise. If mayWrite, the calling goroutine may
// write the queue to the socket itself (startWriting).
func (c *conn) pushWithin(b []byte, max int, evictSelf, mayWrite bool) bool {
	if c.isGone() {
		return false
	}
	c.qmu.Lock()
	if c.unsent > 0 && c.unsent+len(b) > max {
		c.qmu.Unlock()
		return false
	}
	fits, victims := c.s.budget.take(c, len(b))
	start := false
	if fits {
		c.unsent += len(b)
		c.queue = append(c.queue, b...)
		start = c.startWriterLocked()
	}
	c.qmu.Unlock()
	if start {
		c.startWriting(mayWrite)
	}
	for _, v := range victims {
		c.s.overBudget(v)
	}
	if !fits {
		if evictSelf {
			c.s.overBudget(c)
		}
		return false
	}
	return true
}

// send queues a reply. A socket peer whose unsent replies would pass
// Config.MaxUnsent is disconnected; the host waits for room instead, until
// it is gone or shutdown (then the reply is dropped: it was not reading).
func (c *conn) send(b []byte) {
	for !c.push(b) {
		if c.isGone() {
			return
		}
		if c.nc != nil {
			c.s.stats.slowPeers.Add(1)
			c.s.log.Info("disconnected a socket peer that does not read its replies", "limit", c.s.cfg.MaxUnsent)
			c.kill()
			return
		}
		select {
		case <-c.room:
		case <-c.s.closing:
			return
		case <-c.stop.done():
			return
		case <-c.gone.done():
			return
		}
	}
}

// errSlowPeer is returned when a notification is dropped because the peer
// has not read the frames queued before it.
var errSlowPeer = errors.New("service: host is not reading; wire.Notification dropped")

// notify queues a server-to-peer notification without ever waiting: over
// Config.MaxUnsent it is dropped and counted (Stats.NotificationsDropped),
// never a reason to disconnect.
func (c *conn) notify(method string, params any) error {
	b, err := json.Marshal(wire.Notification{JSONRPC: wire.Version, Method: method, Params: params})
	if err != nil {
		return err
	}
	select {
	case <-c.stop.done():
		return nil // the connection is ending
	case <-c.gone.done():
		return nil
	default:
	}
	if !c.pushWithin(append(b, '\n'), c.s.cfg.MaxUnsent, false, true) {
		c.s.stats.notifyDropped.Add(1)
		return errSlowPeer
	}
	return nil
}
