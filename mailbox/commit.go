package mailbox

import (
	"errors"
	"runtime"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

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
// yieldBelow: a leader that finds this many writes queued or more has a
// batch already and does not yield; with hundreds of goroutines runnable
// a yield would make the whole batch wait for all of them.
const yieldBelow = 4

type committer struct {
	mu      sync.Mutex
	queue   []*write // waiting writes, oldest first
	leading bool     // a leader is running; false only while queue is empty
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

// runBatch logs batch in one commit and returns each write's result. Only
// the leader runs it, so it alone uses the log and changes what is
// pending. A write is answered nil only once its frames are flushed and
// have read back as written; what then becomes visible (the index, the
// pending records) is updated before the next leader starts.
func (s *Store) runBatch(batch []*write) []error {
	errs := make([]error, len(batch))
	l := s.log
	if l.broken {
		if _, err := s.checkpointNow(nil); err != nil {
			for i := range errs {
				errs[i] = err
			}
			return errs
		}
	}
	buf, ends := s.frames(batch)
	if len(buf) > 0 {
		good, err := l.append(buf)
		if good > 0 {
			s.nCommits.Add(1)
		}
		start := 0
		for i, w := range batch {
			switch {
			case ends[i] > good:
				errs[i] = err
			case ends[i] > start:
				s.apply(w)
			}
			start = ends[i]
		}
		l.seq += uint64(countFrames(batch))
	}
	var fns []func(*bolt.Tx) error
	var asked []int // the writes whose fns those are
	for i, w := range batch {
		if w.ckpt != nil {
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
