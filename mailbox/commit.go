package mailbox

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// yieldBelow: a leader that finds this many writes queued or more has a
// batch already and does not yield; with hundreds of goroutines runnable
// a yield would make the whole batch wait for all of them. Nor does a
// leader alone in the queue whose previous batch was alone too: a lone
// poster in a closed loop (one child) would only pay the yield, which
// wakes an idle thread to look for the work it put back.
const yieldBelow = 4

// committer batches the Store's writes into shared commits of the log
// (group commit) without a timer and without a goroutine of its own.
//
// A writer queues its write. If no commit is running it becomes the
// leader: it takes the queue (at most maxBatchOps), writes the batch's
// frames to the log in one write, flushes them with one fdatasync, reads
// them back, and (past checkpointAt, or when a write asks) checkpoints
// the log into the bbolt file, in the background unless a write needs
// it done (checkpoint.go). Then it passes leadership to the first
// writer still queued, which does the same with everything that queued
// meanwhile, and only then hands each writer of its batch its result: the
// next commit's flush overlaps this batch's replies instead of waiting
// for them (pipelining). So a lone writer pays one flush and no delay, and
// under load a batch holds what arrived during the previous commit,
// growing with the load.
//
// bbolt's DB.Batch was measured and not used: it waits MaxBatchDelay
// (default 10 ms) before every commit, which caps a sequential poster at
// about 100 posts/s; a 1 ms delay still costs a lone poster 1 ms per post;
// and with a delay of 0 it forms no batches at all.
type committer struct {
	mu      sync.Mutex
	queue   []*write // waiting writes, oldest first
	leading bool     // a leader is running; false only while queue is empty
	// alone: the last batch taken was one write, so its writer had no
	// company to wait for.
	alone bool
}

// write is one operation for the leader: a frame to log (post, once or
// ack), or only a function to run in a checkpoint (ckpt).
type write struct {
	kind      byte // framePost, frameOnce, frameAck, or 0: no frame
	recipient string
	body      []byte // post, once: the record without its checksum (encodeBody), with room for it
	sum       uint32 // bodySum(body)
	noCRC     bool   // seal with zeros (Store.noCRC)
	once      string // once: the report's id, and its stream sequence
	onceSeq   uint64
	ids       []uint64             // ack: the ids asked, found in the index
	ckpt      func(*bolt.Tx) error // run in a checkpoint after the batch's frames

	// Set by the leader.
	id   uint64   // post, once: the id given
	rec  []byte   // post, once: the sealed record
	dup  bool     // once: the id was stored before; nothing logged
	gone []uint64 // ack: the ids removed

	done chan error // 1 slot: the result, or errLead
}

// errLead tells a queued writer that it is now the leader. It never
// reaches a caller.
var errLead = errors.New("mailbox: internal: lead the next commit")

// do runs w in a commit shared with other writers and returns its result.
func (c *committer) do(s *Store, w *write) error {
	w.done = make(chan error, 1)
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
	if len(c.queue) < yieldBelow && !(c.alone && len(c.queue) == 1) {
		c.mu.Unlock()
		runtime.Gosched() // let the runnable posters queue for this commit
		c.mu.Lock()
	}
	// Here w is c.queue[0]: either the queue was empty when w joined, or
	// leadership was handed to the head of the queue.
	n := min(len(c.queue), maxBatchOps)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.alone = n == 1
	c.mu.Unlock()

	errs := s.runBatch(batch)
	c.passLead()
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

// runBatch logs batch and returns each write's result: in one commit,
// unless its frames do not fit in what is left of the log's epoch
// (maxLog), in which case it commits as many writes at a time as fit,
// making room between commits (commitPart). Only the leader runs it, so
// it alone uses the log and changes what is pending. A write is answered
// nil only once its frames are flushed and have read back as written;
// what then becomes visible (the index, the pending records) is updated
// before the next leader starts.
func (s *Store) runBatch(batch []*write) []error {
	errs := make([]error, len(batch))
	for done := 0; done < len(batch); {
		done += s.commitPart(batch[done:], errs[done:])
	}
	var fns []func(*bolt.Tx) error
	var asked []int // the writes whose fns those are
	for i, w := range batch {
		if w.ckpt != nil && errs[i] == nil {
			fns, asked = append(fns, w.ckpt), append(asked, i)
		}
	}
	switch {
	case len(fns) > 0 || s.log.broken:
		// A failed checkpoint fails only the writes that asked for one:
		// the others are logged, and the next commit tries again. A
		// broken log is checkpointed here, not in the background: no
		// commit may be written after a bad frame before it is (see
		// scanEpochs).
		fnErrs, _ := s.checkpointNow(fns)
		for k, i := range asked {
			errs[i] = fnErrs[k]
		}
	default:
		s.maybeCheckpoint()
	}
	return errs
}

// commitPart logs, in one commit, the longest prefix of ws whose frames
// fit in the log's epoch, and returns its length (at least 1), with each
// write's result in errs. If not even the first write fits, it makes
// room first (makeRoom); if no room can be made, every write of ws is
// refused with ErrLogFull, and nothing of them is logged.
func (s *Store) commitPart(ws []*write, errs []error) int {
	if s.log.broken {
		if _, err := s.checkpointNow(nil); err != nil {
			for i := range errs {
				errs[i] = err
			}
			return len(ws)
		}
	}
	id0 := s.lastID
	buf, ends := s.frames(ws)
	n := fitting(ends, maxLog()-s.log.tail)
	if n == 0 && s.log.tail > 0 {
		s.lastID = id0 // nothing was written under the ids given
		if err := s.makeRoom(); err != nil {
			for i := range errs {
				errs[i] = fmt.Errorf("%w: %w", ErrLogFull, err)
			}
			s.nRefused.Add(uint64(len(ws)))
			return len(ws)
		}
		buf, ends = s.frames(ws)
		n = fitting(ends, maxLog())
	}
	if n == 0 { // larger than an epoch of the log: never fits
		s.lastID = id0
		errs[0] = fmt.Errorf("%w: a write of %d bytes of log, larger than the log's %d", ErrLogFull, ends[0], maxLog())
		s.nRefused.Add(1)
		return 1
	}
	if n < len(ws) {
		s.lastID = id0
		for _, w := range ws[:n] {
			if (w.kind == framePost || w.kind == frameOnce) && !w.dup {
				s.lastID = w.id
			}
		}
		buf = buf[:ends[n-1]]
	}
	if len(buf) > 0 {
		l := s.log
		good, err := l.append(buf)
		if good > 0 {
			s.nCommits.Add(1)
		}
		start := 0
		for i, w := range ws[:n] {
			switch {
			case ends[i] > good:
				errs[i] = err
			case ends[i] > start:
				s.apply(w)
			}
			start = ends[i]
		}
		l.seq += uint64(countFrames(ws[:n]))
	}
	if n < len(ws) && !s.log.broken {
		s.maybeCheckpoint()
	}
	return n
}

// fitting is how many of the writes whose frames end at ends fit in room
// bytes.
func fitting(ends []int, room int64) int {
	n := 0
	for n < len(ends) && int64(ends[n]) <= room {
		n++
	}
	return n
}

// frames gives the batch's posts their ids and sealed records, decides
// which PostOnce ids are duplicates and which acked ids are still there,
// and returns the batch's frames and, for each write, where its frames
// end in them.
func (s *Store) frames(batch []*write) ([]byte, []int) {
	l := s.log
	buf := s.frameBuf[:0]
	ends := make([]int, len(batch))
	seq, first := l.seq, l.seq+1
	id := s.lastID
	var onces map[string]bool // once ids of this batch
	var acked map[uint64]bool // ids acked in this batch
	for i, w := range batch {
		w.dup = false // frames may be given again (commitPart)
		switch w.kind {
		case framePost, frameOnce:
			if w.kind == frameOnce {
				if onces[w.once] || s.onceStored(w.once) {
					w.dup = true
					break
				}
				if onces == nil {
					onces = map[string]bool{}
				}
				onces[w.once] = true
			}
			id++
			w.id = id
			if w.noCRC {
				w.rec = append(w.body, 0, 0, 0, 0)
			} else {
				w.rec = sealRecord(w.body, w.sum, id)
			}
			seq++
			buf = appendFrame(buf, &frame{kind: w.kind, epoch: s.epoch, seq: seq, batch: first, id: id,
				recipient: w.recipient, once: w.once, onceSeq: w.onceSeq, rec: w.rec})
		case frameAck:
			w.gone = s.idx.has(w.recipient, w.ids)
			w.gone = slices.DeleteFunc(w.gone, func(id uint64) bool { return acked[id] })
			if acked == nil && len(w.gone) > 0 {
				acked = map[uint64]bool{}
			}
			for chunk := range slices.Chunk(w.gone, maxAckIDs) {
				for _, id := range chunk {
					acked[id] = true
				}
				seq++
				buf = appendFrame(buf, &frame{kind: frameAck, epoch: s.epoch, seq: seq, batch: first, recipient: w.recipient, ids: chunk})
			}
		}
		ends[i] = len(buf)
	}
	s.lastID = id // given even if the commit fails: an id is never given twice
	if cap(buf) <= 1<<20 {
		s.frameBuf = buf
	}
	return buf, ends
}

// countFrames is how many frames frames wrote for batch.
func countFrames(batch []*write) int {
	n := 0
	for _, w := range batch {
		switch {
		case w.kind == frameAck:
			n += (len(w.gone) + maxAckIDs - 1) / maxAckIDs
		case w.kind != 0 && !w.dup:
			n++
		}
	}
	return n
}
