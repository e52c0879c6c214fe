package mailbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/diagrelay/diagrelay/relay"
)

// The file layout (bbolt buckets):
//
//	meta        key "format" = formatTag; the bucket's sequence is the last id given
//	recipients  one nested bucket per recipient with unacknowledged entries,
//	            key = id as 8 bytes big-endian (so a cursor walks oldest first),
//	            value = record (record.go)
//
// Ack deletes entries, and a recipient's bucket with it once empty, so the
// file holds only what is still to be read; bbolt reuses the freed pages.
var (
	metaBucket       = []byte("meta")
	recipientsBucket = []byte("recipients")
	formatKey        = []byte("format")
	formatTag        = []byte("diagrelay-mailbox/1")
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

	nPosts, nAcked, nCommits atomic.Uint64
}

var _ relay.Mailbox = (*Store)(nil)

// Option configures Open.
type Option func(*options)

type options struct {
	lockTimeout time.Duration
}

// WithLockTimeout sets how long Open waits for the file's lock (default
// DefaultLockTimeout). d <= 0 means try once.
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) { o.lockTimeout = d }
}

// Open opens the mailbox file at path, creating it (mode 0600) if it does
// not exist; its directory must exist. It fails with an error wrapping
// ErrLocked if another Store holds the file past the lock timeout, and
// with a clear error if the file is not a bbolt file, is damaged, or is a
// bbolt file of something else.
func Open(path string, opts ...Option) (*Store, error) {
	o := options{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.lockTimeout <= 0 {
		o.lockTimeout = time.Nanosecond // bbolt tries once before it checks the timeout
	}
	db, err := openBolt(path, o.lockTimeout)
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("%w: %s (waited %v)", ErrLocked, path, o.lockTimeout)
		case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
			errors.Is(err, berrors.ErrVersionMismatch):
			return nil, fmt.Errorf("mailbox: open %s: not a bbolt file or its header is damaged: %w", path, err)
		}
		return nil, fmt.Errorf("mailbox: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("mailbox: open %s: %w", path, err)
	}
	return s, nil
}

// openBolt opens the file, turning a panic or fault on a damaged file into
// an error. (After such a panic bbolt's file handle is lost until the
// process exits; a damaged file is not expected to be opened again.)
func openBolt(path string, lockTimeout time.Duration) (db *bolt.DB, err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
}

// init checks the layout of an existing file or lays out a new one.
func (s *Store) init() error {
	var ready bool
	err := s.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		if meta == nil {
			empty := true
			tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return errors.New("a bbolt file but not a diagrelay mailbox (no meta bucket)")
			}
			return nil
		}
		if tag := meta.Get(formatKey); !bytes.Equal(tag, formatTag) {
			return fmt.Errorf("unsupported mailbox format %q (want %q)", tag, formatTag)
		}
		if tx.Bucket(recipientsBucket) == nil {
			return fmt.Errorf("%w: no recipients bucket", ErrCorrupt)
		}
		ready = true
		return nil
	})
	if err != nil || ready {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		if err := meta.Put(formatKey, formatTag); err != nil {
			return err
		}
		_, err = tx.CreateBucket(recipientsBucket)
		return err
	})
}

// Path returns the file's path as given to Open.
func (s *Store) Path() string { return s.path }

// Post stores m under the next id and returns once the transaction holding
// it is committed and fsynced. Posts that arrive while another commit is
// being written are committed together in the next one (group commit), so
// concurrent posters share fsyncs and a lone poster waits for one commit.
// An error means m was not stored; it is the same as Memory's for a message
// that breaks the package limits.
func (s *Store) Post(m relay.ParentMessage) error {
	if err := validate(&m); err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	rec := encodeRecord(nil, &m)
	recipient := []byte(m.Recipient)
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	err := s.commits.do(s, func(tx *bolt.Tx) error {
		id, err := tx.Bucket(metaBucket).NextSequence()
		if err != nil {
			return err
		}
		box, err := tx.Bucket(recipientsBucket).CreateBucketIfNotExists(recipient)
		if err != nil {
			return err
		}
		return box.Put(idKey(id), rec)
	})
	if err == nil {
		s.nPosts.Add(1)
	}
	return err
}

// Read returns recipient's unacknowledged entries, oldest first, at most
// limit of them (DefaultReadLimit if limit <= 0, never more than
// MaxReadLimit). It does not remove them: Ack does. The slice is never nil.
// A damaged record fails the whole Read with an error wrapping ErrCorrupt.
func (s *Store) Read(recipient string, limit int) ([]Entry, error) {
	limit = readLimit(limit)
	if err := s.acquire(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	out := []Entry{}
	err := s.view(func(tx *bolt.Tx) error {
		box := tx.Bucket(recipientsBucket).Bucket([]byte(recipient))
		if box == nil {
			return nil
		}
		c := box.Cursor()
		for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
			if len(k) != 8 || v == nil {
				return fmt.Errorf("%w: bad key %x in %q", ErrCorrupt, k, recipient)
			}
			id := binary.BigEndian.Uint64(k)
			m, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("%w: message %d for %q: %v", ErrCorrupt, id, recipient, err)
			}
			if m.Recipient != recipient {
				return fmt.Errorf("%w: message %d filed under %q is for %q", ErrCorrupt, id, recipient, m.Recipient)
			}
			out = append(out, Entry{ID: id, ParentMessage: m})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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

	// Find what is there in a read transaction first, so that a repeated
	// Ack (usual with at-least-once readers) costs no commit.
	var keys [][]byte
	err := s.view(func(tx *bolt.Tx) error {
		box := tx.Bucket(recipientsBucket).Bucket([]byte(recipient))
		if box == nil {
			return nil
		}
		for _, id := range ids {
			if k := idKey(id); box.Get(k) != nil {
				keys = append(keys, k)
			}
		}
		return nil
	})
	if err != nil || len(keys) == 0 {
		return 0, err
	}

	var acked int
	err = s.commits.do(s, func(tx *bolt.Tx) error {
		acked = 0 // the function may run twice (committer's solo retry)
		boxes := tx.Bucket(recipientsBucket)
		box := boxes.Bucket([]byte(recipient))
		if box == nil {
			return nil // acknowledged concurrently
		}
		for _, k := range keys {
			// Get first: ids may repeat, and a concurrent Ack may have
			// removed some since the read.
			if box.Get(k) == nil {
				continue
			}
			if err := box.Delete(k); err != nil {
				return err
			}
			acked++
		}
		if k, _ := box.Cursor().First(); k == nil {
			return boxes.DeleteBucket([]byte(recipient))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.nAcked.Add(uint64(acked))
	return acked, nil
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

func idKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id)
}
