package mailbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime/debug"
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
	idx     *index // whose entries are where in log

	// noCRC makes Post write zeros where a record's CRC-32C goes instead
	// of computing it; the record, its verification before the commit and
	// its read-back after it are otherwise the same. Such records fail
	// their checksum on read. Only bench_test.go sets it, to measure what
	// computing the checksum costs a Post.
	noCRC bool

	nPosts, nAcked, nCommits atomic.Uint64
}

// Path returns the file's path as given to Open.
func (s *Store) Path() string { return s.path }

// Post stores m under the next id and returns once the transaction holding
// it is committed and fsynced and the record reads back from the file as
// written. Posts that arrive while another commit is being written are
// committed together in the next one (group commit), so concurrent posters
// share fsyncs and a lone poster waits for one commit. An error means m
// was not stored, or (wrapping ErrCorrupt) that its record did not read
// back, in which case Read reports it as damaged rather than serve it. A
// message that breaks the package limits gets the same error as Memory's.
func (s *Store) Post(m diag.ParentMessage) error {
	if err := validate(&m); err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	body := encodeBody(nil, &m)
	// Verify the encoding here, in the poster's goroutine, so that the
	// commit (serial) only seals it and compares bytes on read-back.
	if !recordIs(body, &m) {
		return fmt.Errorf("mailbox: internal error: the record of a message does not decode back to it")
	}
	var sum uint32
	if !s.noCRC {
		sum = bodySum(body)
	}
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	wrote := &stored{recipient: m.Recipient}
	err := s.commits.doChecked(s, func(tx *bolt.Tx) error {
		id, err := tx.Bucket(metaBucket).NextSequence()
		if err != nil {
			return err
		}
		log := tx.Bucket(logBucket)
		log.FillPercent = logFillPercent
		var rec []byte // body has room for the checksum: no copy
		if s.noCRC {
			rec = append(body, 0, 0, 0, 0)
		} else {
			rec = sealRecord(body, sum, id)
		}
		wrote.id, wrote.key, wrote.rec = id, logKey(id, m.Recipient), rec
		return log.Put(wrote.key, rec)
	}, wrote)
	if err == nil {
		s.nPosts.Add(1)
	}
	return err
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
	// no record any more and is passed over.
	var last uint64
	for first := true; len(p.Messages) < limit && len(p.Damaged) < MaxReadLimit; first = false {
		ids := s.idx.after(recipient, last, first, max(limit-len(p.Messages), 64))
		if len(ids) == 0 {
			break
		}
		last = ids[len(ids)-1]
		err := s.view(func(tx *bolt.Tx) error {
			// One cursor for the chunk (Bucket.Get makes one per call),
			// and one key, rewritten: Seek keeps neither.
			c := tx.Bucket(logBucket).Cursor()
			key := logKey(0, recipient)
			for _, id := range ids {
				if len(p.Messages) == limit || len(p.Damaged) == MaxReadLimit {
					break
				}
				binary.BigEndian.PutUint64(key, id)
				k, v := c.Seek(key)
				if v == nil || !bytes.Equal(k, key) {
					continue // acknowledged meanwhile
				}
				m, _, err := decodeRecord(id, v)
				if err != nil || m.Recipient != recipient {
					p.Damaged = append(p.Damaged, id)
					continue
				}
				p.Messages = append(p.Messages, Entry{ID: id, ParentMessage: m})
			}
			return nil
		})
		if err != nil {
			return Page{}, err
		}
	}
	return p, nil
}

// Ack removes recipient's unacknowledged entries whose ids are in ids and
// returns how many it removed, once the removal is committed and fsynced.
// Ids that are unknown, already acknowledged, repeated, or another
// recipient's are ignored; an Ack that matches nothing writes nothing.
func (s *Store) Ack(recipient string, ids []uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()

	// Find what is there in the index first, so that a repeated Ack
	// (usual with at-least-once readers) costs no commit.
	found := s.idx.has(recipient, ids)
	if len(found) == 0 {
		return 0, nil
	}
	var gone []uint64
	err := s.commits.do(s, func(tx *bolt.Tx) error {
		gone = gone[:0] // the function may run twice (committer's solo retry)
		log := tx.Bucket(logBucket)
		for _, id := range found {
			// Get first: a concurrent Ack may have removed some since.
			k := logKey(id, recipient)
			if log.Get(k) == nil {
				continue
			}
			if err := log.Delete(k); err != nil {
				return err
			}
			gone = append(gone, id)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.idx.remove(recipient, gone)
	s.nAcked.Add(uint64(len(gone)))
	return len(gone), nil
}

// Close waits for the operations in flight to finish (their posts are
// committed), then closes the file and releases its lock. Later calls of
// every method return ErrClosed, except Close, which returns nil.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

// Stats counts a Store's work since Open.
type Stats struct {
	Posts   uint64 // messages stored by Post
	Acked   uint64 // entries removed by Ack
	Commits uint64 // write transactions committed (each fsyncs the file)
}

// Stats returns the counters. Commits/Posts shows how well concurrent posts
// share commits.
func (s *Store) Stats() Stats {
	return Stats{Posts: s.nPosts.Load(), Acked: s.nAcked.Load(), Commits: s.nCommits.Load()}
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
