package mailbox

import (
	"errors"
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// committer batches the Store's writes into shared transactions (group
// commit) without a timer and without a goroutine of its own.
//
// A writer queues its function. If no commit is running it becomes the
// leader: it takes the queue (at most maxBatchOps), runs the functions in
// one bbolt transaction and commits (fsync). Then it passes leadership to
// the first writer still queued, which does the same with everything that
// queued while that commit was being written, and only then reads the
// batch back and hands each writer its result: the next commit's fsyncs
// overlap this batch's read-back and replies instead of waiting for them
// (pipelining). So a lone writer pays one commit and no delay, and under
// load a batch holds what arrived during the previous commit, growing with
// the load.
//
// bbolt's DB.Batch was measured and not used: it waits MaxBatchDelay
// (default 10 ms) before every commit, which caps a sequential poster at
// about 100 posts/s; a 1 ms delay still costs a lone poster 1 ms per post;
// and with a delay of 0 it forms no batches at all.
// yieldBelow: a leader that finds this many writes queued or more has a
// batch already and does not yield; with hundreds of goroutines runnable
// a yield would make the whole batch wait for all of them.
const yieldBelow = 4

type committer struct {
	mu      sync.Mutex
	queue   []*write // waiting writes, oldest first
	leading bool     // a leader is running; false only while queue is empty
}

type write struct {
	fn    func(*bolt.Tx) error // may run twice: see Store.runBatch
	wrote *stored              // nil, or the record fn put, read back after the commit
	done  chan error           // 1 slot: the result, or errLead
}

// errLead tells a queued writer that it is now the leader. It never
// reaches a caller.
var errLead = errors.New("mailbox: internal: lead the next commit")

// do runs fn in a committed write transaction shared with other writers
// and returns fn's result (or the commit's).
func (c *committer) do(s *Store, fn func(*bolt.Tx) error) error {
	return c.doChecked(s, fn, nil)
}

// doChecked is do, and then, if the commit succeeded and wrote is not nil,
// whether the record fn put (and described in wrote) reads back as written
// (see readBack).
func (c *committer) doChecked(s *Store, fn func(*bolt.Tx) error, wrote *stored) error {
	w := &write{fn: fn, wrote: wrote, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, w)
	if c.leading {
		c.mu.Unlock()
		if err := <-w.done; err != errLead {
			return err
		}
		c.mu.Lock()
	} else {
		c.leading = true
	}
	if len(c.queue) < yieldBelow {
		c.mu.Unlock()
		runtime.Gosched() // let the runnable posters queue for this commit
		c.mu.Lock()
	}
	// Here w is c.queue[0]: either the queue was empty when w joined, or
	// leadership was handed to the head of the queue.
	n := min(len(c.queue), maxBatchOps)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	errs, rb := s.runBatch(batch)
	c.passLead()
	if rb != nil {
		rb.check(batch, errs)
	}
	for i, other := range batch[1:] {
		other.done <- errs[i+1]
	}
	return errs[0]
}

// passLead makes the first queued writer the leader of the next commit, or
// ends the leading if none is queued.
func (c *committer) passLead() {
	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.mu.Unlock()
		next.done <- errLead
		return
	}
	c.leading = false
	c.queue = nil // drop the consumed backing array
	c.mu.Unlock()
}

// runBatch commits batch in one transaction and returns each write's
// result so far, and the read-back of the commit still to be checked (nil
// if there is nothing to read back): it was begun after this commit and
// before any later one, so the next commit may run while it is checked.
// If the batch fails, each write is retried in a transaction of its own,
// so that one bad write cannot fail the others; those are read back here.
func (s *Store) runBatch(batch []*write) ([]error, *readBack) {
	errs := make([]error, len(batch))
	err := s.update(func(tx *bolt.Tx) error {
		for _, w := range batch {
			if err := w.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.nCommits.Add(1)
		return errs, s.beginReadBack(batch, errs)
	}
	if len(batch) == 1 {
		errs[0] = err
		return errs, nil
	}
	for i, w := range batch {
		if errs[i] = s.update(w.fn); errs[i] == nil {
			s.nCommits.Add(1)
			if rb := s.beginReadBack(batch[i:i+1], errs[i:i+1]); rb != nil {
				rb.check(batch[i:i+1], errs[i:i+1])
			}
		}
	}
	return errs, nil
}
