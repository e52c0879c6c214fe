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
// before (and not forgotten since): the id and the record are logged in
// one frame, so a crash stores both or neither, and a redelivery of an id
// already stored returns dup true, storing nothing. seq orders ids for
// ForgetOnceThrough.
func (s *Store) PostOnce(id string, seq uint64, m diag.ParentMessage) (dup bool, err error) {
	if id == "" || len(id) > MaxOnceID {
		return false, fmt.Errorf("mailbox: a once id must be 1 to %d bytes, not %d", MaxOnceID, len(id))
	}
	w, err := s.postWrite(&m)
	if err != nil {
		return false, err
	}
	w.kind, w.once, w.onceSeq = frameOnce, id, seq
	if err := s.acquire(); err != nil {
		return false, err
	}
	defer s.closeMu.RUnlock()
	if err := s.commits.do(s, w); err != nil {
		return false, err
	}
	if !w.dup {
		s.nPosts.Add(1)
	}
	return w.dup, nil
}

// ForgetOnceThrough forgets the ids that PostOnce stored with a sequence
// at most seq, and returns how many: a cluster home calls it with its
// consumer's acknowledgement floor, below which no message is delivered
// again. It checkpoints the log and forgets in the same transaction.
func (s *Store) ForgetOnceThrough(seq uint64) (int, error) {
	if err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()
	n := 0
	err := s.commits.do(s, &write{ckpt: func(tx *bolt.Tx) error {
		n = 0 // the checkpoint may be tried twice
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
	}})
	return n, err
}

// OnceIDs returns how many ids PostOnce stored that are not yet forgotten.
func (s *Store) OnceIDs() (int, error) {
	if err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()
	// Pending ids that a checkpoint has written into the file but not yet
	// dropped from memory are in the bucket too: the file's log mark, in
	// the same transaction as the bucket's count, says which those are.
	type pending struct{ epoch, n uint64 }
	var ps [2]pending
	s.pendMu.RLock()
	ps[0] = pending{s.pend.epoch, uint64(len(s.pend.onces))}
	if s.frozen != nil {
		ps[1] = pending{s.frozen.epoch, uint64(len(s.frozen.onces))}
	}
	s.pendMu.RUnlock()
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		mark, err := readMark(tx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.epoch > mark {
				n += int(p.n)
			}
		}
		if once := tx.Bucket(onceBucket); once != nil {
			n += once.Stats().KeyN
		}
		return nil
	})
	return n, err
}
