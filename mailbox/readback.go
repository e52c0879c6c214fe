package mailbox

import (
	"bytes"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// stored is a record a Post put in a write transaction, to be read back
// once that transaction is committed.
type stored struct {
	recipient string
	id        uint64
	key, rec  []byte // set by the write function, on each run
}

// readBack is a read transaction begun right after a commit, before any
// later one, so it sees the file as that commit left it: check reads the
// commit's records there. Holding it open does not stop the next commit
// (bbolt keeps the pages it sees until it ends).
type readBack struct {
	s  *Store
	tx *bolt.Tx
}

// beginReadBack begins the read-back of a committed batch, or returns nil
// when no write of the batch put a record. If the transaction cannot be
// begun, every record of the batch is marked as not read back (and
// indexed, so that ReadPage lists it) here.
func (s *Store) beginReadBack(batch []*write, errs []error) *readBack {
	any := false
	for _, w := range batch {
		any = any || (w.wrote != nil && w.wrote.key != nil)
	}
	if !any {
		return nil
	}
	tx, err := s.beginView()
	if err != nil {
		failRecords(batch, errs, err)
		s.indexWrites(batch)
		return nil
	}
	return &readBack{s: s, tx: tx}
}

// beginView begins a read transaction as view does, a panic turned into an
// error wrapping ErrCorrupt.
func (s *Store) beginView() (tx *bolt.Tx, err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return s.db.Begin(false)
}

// check reads the records the batch wrote, records in errs each write
// whose record is missing or differs, ends the transaction, and indexes the
// batch's entries. One cursor serves the whole batch: its new keys are the
// highest in log and come in increasing order, so after one Seek each is
// found by stepping forward.
func (rb *readBack) check(batch []*write, errs []error) {
	if err := rb.compare(batch, errs); err != nil {
		failRecords(batch, errs, err)
	}
	rb.s.indexWrites(batch)
}

func (rb *readBack) compare(batch []*write, errs []error) (err error) {
	defer rb.tx.Rollback()
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var c *bolt.Cursor
	var k, v []byte
	for i, w := range batch {
		st := w.wrote
		if st == nil || st.key == nil || errs[i] != nil { // nil key: nothing written (PostOnce's duplicate)
			continue
		}
		if c == nil {
			c = rb.tx.Bucket(logBucket).Cursor()
			k, v = c.Seek(st.key)
		}
		for k != nil && bytes.Compare(k, st.key) < 0 {
			k, v = c.Next()
		}
		if !bytes.Equal(k, st.key) || !bytes.Equal(v, st.rec) {
			errs[i] = fmt.Errorf("%w: the record of a message for %q (id %d) did not read back as written", ErrCorrupt, st.recipient, st.id)
		}
	}
	return nil
}

// failRecords marks with err each write of the batch that put a record and
// has no error yet.
func failRecords(batch []*write, errs []error, err error) {
	for i, w := range batch {
		if w.wrote != nil && w.wrote.key != nil && errs[i] == nil {
			errs[i] = err
		}
	}
}

// indexWrites adds the entries of committed writes to the index, before their
// writers are answered: a reader that Posts then Reads finds its entry.
// An entry that did not read back is indexed too, so that ReadPage lists
// it as damaged instead of leaving it unseen.
func (s *Store) indexWrites(batch []*write) {
	for _, w := range batch {
		if w.wrote != nil && w.wrote.key != nil {
			s.idx.add(w.wrote.recipient, w.wrote.id)
		}
	}
}
