package mailbox

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/diag"
)

// onceBucket holds the ids of the messages PostOnce stored (a cluster
// home's reports, docs/cluster.md): key = the id's bytes, value = the
// stream sequence of the message that carried it, 8 bytes big-endian. The
// bucket is made at the first PostOnce, so a mailbox that never takes a
// cluster's report has none, and a reader that does not know it ignores it.
var onceBucket = []byte("once")

// MaxOnceID is the longest id PostOnce takes, in bytes.
const MaxOnceID = 256

// PostOnce is Post, but stores m only if no message was stored under id
// before (and not forgotten since): the id and the record are written in
// one transaction, so a crash stores both or neither, and a redelivery of
// an id already stored returns dup true, storing nothing. seq orders ids
// for ForgetOnceThrough.
func (s *Store) PostOnce(id string, seq uint64, m diag.ParentMessage) (dup bool, err error) {
	if id == "" || len(id) > MaxOnceID {
		return false, fmt.Errorf("mailbox: a once id must be 1 to %d bytes, not %d", MaxOnceID, len(id))
	}
	if err := validate(&m); err != nil {
		return false, fmt.Errorf("mailbox: %w", err)
	}
	body := encodeBody(nil, &m)
	if !recordIs(body, &m) {
		return false, fmt.Errorf("mailbox: internal error: the record of a message does not decode back to it")
	}
	sum := bodySum(body)
	if err := s.acquire(); err != nil {
		return false, err
	}
	defer s.closeMu.RUnlock()
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], seq)
	wrote := &stored{recipient: m.Recipient}
	err = s.commits.doChecked(s, func(tx *bolt.Tx) error {
		dup, wrote.key = false, nil // the function may run twice (runBatch)
		once, err := tx.CreateBucketIfNotExists(onceBucket)
		if err != nil {
			return err
		}
		if once.Get([]byte(id)) != nil {
			dup = true
			return nil
		}
		if err := once.Put([]byte(id), v[:]); err != nil {
			return err
		}
		nid, err := tx.Bucket(metaBucket).NextSequence()
		if err != nil {
			return err
		}
		log := tx.Bucket(logBucket)
		log.FillPercent = logFillPercent
		rec := sealRecord(append([]byte(nil), body...), sum, nid)
		wrote.id, wrote.key, wrote.rec = nid, logKey(nid, m.Recipient), rec
		return log.Put(wrote.key, rec)
	}, wrote)
	if err == nil && !dup {
		s.nPosts.Add(1)
	}
	return dup, err
}

// ForgetOnceThrough forgets the ids that PostOnce stored with a sequence
// at most seq, in one transaction, and returns how many: a cluster home
// calls it with its consumer's acknowledgement floor, below which no
// message is delivered again.
func (s *Store) ForgetOnceThrough(seq uint64) (int, error) {
	if err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()
	n := 0
	err := s.commits.do(s, func(tx *bolt.Tx) error {
		n = 0
		once := tx.Bucket(onceBucket)
		if once == nil {
			return nil
		}
		var drop [][]byte
		once.ForEach(func(k, v []byte) error {
			if len(v) != 8 || binary.BigEndian.Uint64(v) <= seq {
				drop = append(drop, append([]byte(nil), k...))
			}
			return nil
		})
		for _, k := range drop {
			if err := once.Delete(k); err != nil {
				return err
			}
		}
		n = len(drop)
		return nil
	})
	return n, err
}

// OnceIDs returns how many ids PostOnce stored that are not yet forgotten.
func (s *Store) OnceIDs() (int, error) {
	if err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		if once := tx.Bucket(onceBucket); once != nil {
			n = once.Stats().KeyN
		}
		return nil
	})
	return n, err
}
