package mailbox

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// stored is a record a Post put in a write transaction, to be read back
// once that transaction is committed.
type stored struct {
	recipient string
	id        uint64
	key, rec  []byte // set by the write function, on each run
}

// readBack reads the records a committed batch wrote, in one read
// transaction begun after the commit and before any later one, so it sees
// the file as that commit left it, and records in errs each write whose
// record is missing or differs. One cursor serves the whole batch: its
// new keys are the highest in log and come in increasing order, so after
// one Seek each is found by stepping forward.
func (s *Store) readBack(batch []*write, errs []error) {
	any := false
	for _, w := range batch {
		any = any || w.wrote != nil
	}
	if !any {
		return
	}
	err := s.view(func(tx *bolt.Tx) error {
		var c *bolt.Cursor
		var k, v []byte
		for i, w := range batch {
			st := w.wrote
			if st == nil || st.key == nil || errs[i] != nil { // nil key: nothing written (PostOnce's duplicate)
				continue
			}
			if c == nil {
				c = tx.Bucket(logBucket).Cursor()
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
	})
	if err != nil {
		for i, w := range batch {
			if w.wrote != nil && errs[i] == nil {
				errs[i] = err
			}
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
