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
	key, rec  []byte // set by the write function, on each run
}

// readBack reads the records a committed batch wrote, in one read
// transaction begun after the commit and before any later one, so it sees
// the file as that commit left it, and records in errs each write whose
// record is missing or differs. One cursor per recipient serves the whole
// batch: a batch's new ids are the highest in their buckets and come in
// increasing order, so after one Seek each is found by stepping forward.
func (s *Store) readBack(batch []*write, errs []error) {
	any := false
	for _, w := range batch {
		any = any || w.wrote != nil
	}
	if !any {
		return
	}
	type position struct {
		recipient string
		c         *bolt.Cursor // nil: no such bucket
		k, v      []byte
	}
	var cursors []position // a batch has few recipients
	find := func(recipient string) *position {
		for i := range cursors {
			if cursors[i].recipient == recipient {
				return &cursors[i]
			}
		}
		return nil
	}
	err := s.view(func(tx *bolt.Tx) error {
		boxes := tx.Bucket(recipientsBucket)
		for i, w := range batch {
			st := w.wrote
			if st == nil || errs[i] != nil {
				continue
			}
			p := find(st.recipient)
			switch {
			case p == nil:
				cursors = append(cursors, position{recipient: st.recipient})
				p = &cursors[len(cursors)-1]
				if box := boxes.Bucket([]byte(st.recipient)); box != nil {
					p.c = box.Cursor()
					p.k, p.v = p.c.Seek(st.key)
				}
			case p.c != nil:
				for p.k != nil && bytes.Compare(p.k, st.key) < 0 {
					p.k, p.v = p.c.Next()
				}
			}
			if !bytes.Equal(p.k, st.key) || !bytes.Equal(p.v, st.rec) {
				errs[i] = fmt.Errorf("%w: the record of a message for %q (key %x) did not read back as written", ErrCorrupt, st.recipient, st.key)
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
