package mailbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/diag"
)

// DefaultLockTimeout is how long Open waits for another holder of the file
// to let go before it fails with ErrLocked.
const DefaultLockTimeout = time.Second

// maxBatchOps bounds the writes committed in one transaction, so that one
// commit's latency stays bounded under a flood.
const maxBatchOps = 1000

// Store is a durable mailbox in one bbolt file. It is safe for concurrent
// use by many goroutines; one Store at a time may hold the file.
type Store struct {
	db   *bolt.DB
	path string

	// closeMu is held shared by every operation for its whole duration and
	// exclusively by Close, so Close waits for operations in flight.
	closeMu sync.RWMutex
	closed  bool

	commits committer
	idx     *index // whose entries are where: in log, or pending

	// logs are the log's two files (LogPaths), log the one epoch is
	// written in, pend what the epoch holds, in memory, and frozen what
	// the epoch before it holds while a background checkpoint writes it
	// into db, done when bg is closed (checkpoint.go). Only the commit
	// leader (or Open and Close, alone) uses logs, log, epoch, bg, lastID
	// and frameBuf, and changes pend and frozen, under pendMu, which
	// readers take shared (the background checkpoint sets frozen to nil).
	logs     [2]*logFile
	log      *logFile
	epoch    uint64
	pendMu   sync.RWMutex
	pend     pendingState
	frozen   *pendingState
	bg       chan struct{}
	lastID   uint64 // the last id given
	frameBuf []byte

	// noCRC makes Post write zeros where a record's CRC-32C goes instead
	// of computing it; the record, its verification before the commit and
	// its read-back after it are otherwise the same. Such records fail
	// their checksum on read. Only bench_test.go sets it, to measure what
	// computing the checksum costs a Post.
	noCRC bool

	nPosts, nAcked, nCommits, nCheckpoints, nRefused atomic.Uint64
}

// Path returns the file's path as given to Open.
func (s *Store) Path() string { return s.path }

// Post stores m under the next id and returns once its frame is written
// to the log, flushed (one fdatasync) and read back from the file as
// written (docs/mailbox.md, "One flush a commit"). Posts that arrive
// while another commit is being written are committed together in the
// next one (group commit), so concurrent posters share flushes and a lone
// poster waits for one. An error means m was not stored (wrapping
// ErrCorrupt if its frame did not read back). A message that breaks the
// package limits gets the same error as Memory's.
func (s *Store) Post(m diag.ParentMessage) error {
	w, err := s.postWrite(&m)
	if err != nil {
		return err
	}
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if err := s.commits.do(s, w); err != nil {
		return err
	}
	s.nPosts.Add(1)
	return nil
}

// postWrite checks and encodes m for a post, in the poster's goroutine,
// so that the commit (serial) only seals it.
func (s *Store) postWrite(m *diag.ParentMessage) (*write, error) {
	if err := validate(m); err != nil {
		return nil, fmt.Errorf("mailbox: %w", err)
	}
	body := encodeBody(nil, m)
	// Verify the encoding here, so that what the log holds is known to
	// decode back to m; the read-back then compares bytes.
	if !recordIs(body, m) {
		return nil, fmt.Errorf("mailbox: internal error: the record of a message does not decode back to it")
	}
	w := &write{kind: framePost, recipient: m.Recipient, body: body, noCRC: s.noCRC}
	if !s.noCRC {
		w.sum = bodySum(body)
	}
	return w, nil
}

// Page is one ReadPage result.
type Page struct {
	// Messages are the recipient's unacknowledged messages, oldest first.
	// Never nil.
	Messages []Entry
	// Damaged are the ids of the recipient's records, among those the read
	// passed over, that failed their checksum or could not be decoded,
	// lowest first. Never nil. They are never served as messages; Ack
	// removes them like any other id.
	Damaged []uint64
}

// Read is ReadPage without the damaged ids: it returns recipient's
// unacknowledged messages, oldest first, at most limit of them, skipping
// damaged records. The slice is never nil.
func (s *Store) Read(recipient string, limit int) ([]Entry, error) {
	p, err := s.ReadPage(recipient, limit)
	return p.Messages, err
}

// ReadPage returns recipient's unacknowledged messages, oldest first, at
// most limit of them (DefaultReadLimit if limit <= 0, never more than
// MaxReadLimit), and the ids of the damaged records it passed over on the
// way, at most MaxReadLimit of them (the read stops there). It does not
// remove anything: Ack does. One damaged record never hides the others: a
// record that fails its checksum, cannot be decoded, or is addressed to
// another recipient is listed in Damaged and the read goes on. (A key that
// is not an id at all, which only damage to the file can make, is passed
// over; Check counts it.)
func (s *Store) ReadPage(recipient string, limit int) (Page, error) {
	limit = readLimit(limit)
	if err := s.acquire(); err != nil {
		return Page{}, err
	}
	defer s.closeMu.RUnlock()
	p := Page{Messages: []Entry{}, Damaged: []uint64{}}
	// The ids come from the index a chunk at a time, so that no lock is
	// held while the records are read; an id acknowledged meanwhile has
	// no record any more and is passed over. Each chunk's records are
	// looked up among the pending first and then, for the rest, in a
	// read transaction begun after that: a record a checkpoint moved
	// meanwhile is in the file by then.
	var last uint64
	for first := true; len(p.Messages) < limit && len(p.Damaged) < MaxReadLimit; first = false {
		ids := s.idx.after(recipient, last, first, max(limit-len(p.Messages), 64))
		if len(ids) == 0 {
			break
		}
		last = ids[len(ids)-1]
		recs := make([][]byte, len(ids))
		inFile := 0
		s.pendMu.RLock()
		for i, id := range ids {
			r, ok := s.pend.recs[id]
			if !ok && s.frozen != nil {
				r, ok = s.frozen.recs[id]
			}
			if ok && r.recipient == recipient {
				recs[i] = r.rec
			} else {
				inFile++
			}
		}
		s.pendMu.RUnlock()
		if inFile > 0 {
			if err := s.view(func(tx *bolt.Tx) error { return readRecords(tx, recipient, ids, recs) }); err != nil {
				return Page{}, err
			}
		}
		for i, id := range ids {
			if len(p.Messages) == limit || len(p.Damaged) == MaxReadLimit {
				break
			}
			if recs[i] == nil {
				continue // acknowledged meanwhile
			}
			m, _, err := decodeRecord(id, recs[i])
			if err != nil || m.Recipient != recipient {
				p.Damaged = append(p.Damaged, id)
				continue
			}
			p.Messages = append(p.Messages, Entry{ID: id, ParentMessage: m})
		}
	}
	return p, nil
}

// readRecords fills in recs, for each id whose record is still nil, its
// record in the file (a copy), or leaves it nil if there is none.
func readRecords(tx *bolt.Tx, recipient string, ids []uint64, recs [][]byte) error {
	// One cursor for the chunk (Bucket.Get makes one per call), and one
	// key, rewritten: Seek keeps neither.
	c := tx.Bucket(logBucket).Cursor()
	key := logKey(0, recipient)
	for i, id := range ids {
		if recs[i] != nil {
			continue
		}
		binary.BigEndian.PutUint64(key, id)
		if k, v := c.Seek(key); v != nil && bytes.Equal(k, key) {
			recs[i] = bytes.Clone(v)
		}
	}
	return nil
}

// Ack removes recipient's unacknowledged entries whose ids are in ids and
// returns how many it removed, once the removal is logged and flushed
// (the next checkpoint deletes them from the file). An Ack of more than
// 8192 ids is logged in parts of 8192, each atomic: on an error, the
// count says what the parts before it removed. Ids that are unknown,
// already acknowledged, repeated, or another recipient's are ignored; an
// Ack that matches nothing writes nothing.
func (s *Store) Ack(recipient string, ids []uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()

	// Find what is there in the index first, so that a repeated Ack
	// (usual with at-least-once readers) costs no commit. The leader
	// looks again: a concurrent Ack may have removed some since.
	found := s.idx.has(recipient, ids)
	if len(found) == 0 {
		return 0, nil
	}
	// A large Ack is logged in parts, so that no write is larger than
	// the log can take (maxLog); each part is atomic.
	n := 0
	for part := range slices.Chunk(found, min(maxAckIDs, int(maxLog()/16))) {
		w := &write{kind: frameAck, recipient: recipient, ids: part}
		if err := s.commits.do(s, w); err != nil {
			return n, err
		}
		n += len(w.gone)
	}
	return n, nil
}

// Close waits for the operations in flight to finish (their posts are
// committed), checkpoints the log into the file, then closes both and
// releases the file's lock. Later calls of every method return ErrClosed,
// except Close, which returns nil.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.waitBackground()
	_, err := s.checkpointNow(nil) // always: it takes the file's tag back to formatTag
	return errors.Join(err, s.logs[0].close(), s.logs[1].close(), s.db.Close())
}

// Stats counts a Store's work since Open.
type Stats struct {
	Posts   uint64 // messages stored by Post
	Acked   uint64 // entries removed by Ack
	Commits uint64 // group commits of the log (each one fdatasync)
	// Checkpoints counts the log's checkpoints into the bbolt file (each
	// an ordinary bbolt commit: two flushes).
	Checkpoints uint64
	// Refused counts the posts, once posts and acks refused with
	// ErrLogFull: the log was at its bound and could not be checkpointed.
	Refused uint64
}

// Stats returns the counters. Commits/Posts shows how well concurrent posts
// share commits.
func (s *Store) Stats() Stats {
	return Stats{Posts: s.nPosts.Load(), Acked: s.nAcked.Load(), Commits: s.nCommits.Load(), Checkpoints: s.nCheckpoints.Load(), Refused: s.nRefused.Load()}
}

// acquire takes closeMu shared, or fails if the Store is closed.
func (s *Store) acquire() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

// view and update run a bbolt transaction and turn a panic inside it into
// an error wrapping ErrCorrupt. On a damaged file bbolt panics, or hands out
// slices that point past its read-only memory map; SetPanicOnFault turns
// the resulting fault into a panic too, instead of a crash of the process.
// bbolt rolls the transaction back as the panic unwinds.
func (s *Store) view(fn func(*bolt.Tx) error) (err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return s.db.View(fn)
}

func (s *Store) update(fn func(*bolt.Tx) error) (err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return s.db.Update(fn)
}

func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrCorrupt, r)
	}
}
