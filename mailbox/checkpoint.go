package mailbox

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// What the log holds that the bbolt file does not yet (docs/mailbox.md,
// "One flush a commit"): kept in memory from the commit that logged it to
// the checkpoint that writes it into the file, so that reads need not
// parse the log. Bounded by checkpointAt (plus one batch).
type pendingState struct {
	// recs are the logged records not acknowledged since, by id.
	recs map[uint64]pendingRec
	// acks are the log keys of entries of the file acknowledged since
	// the last checkpoint: the checkpoint deletes them.
	acks [][]byte
	// onces are the once ids logged (with their stream sequences).
	onces map[string]uint64
}

type pendingRec struct {
	recipient string
	rec       []byte
}

func newPending() pendingState {
	return pendingState{recs: map[uint64]pendingRec{}, onces: map[string]uint64{}}
}

// logMarkKey, in meta, holds the epoch (8 bytes, big-endian) of the last
// log whose every frame a checkpoint wrote into the file; the log being
// written is of the next epoch. Absent: 0.
var logMarkKey = []byte("logmark")

// checkpointing, if not nil, is called in each checkpoint: with "written"
// when its transaction is written but not committed, with "committed"
// when it is committed but the log not yet begun again. The crash tests'
// cue to kill.
var checkpointing func(stage string)

// apply makes what a write logged visible: its record pending and
// indexed, its acks removed. Only the leader (and Open's replay) calls it,
// after the frames are flushed and read back.
func (s *Store) apply(w *write) {
	switch w.kind {
	case framePost, frameOnce:
		if w.dup {
			return
		}
		s.pendMu.Lock()
		s.pend.recs[w.id] = pendingRec{recipient: w.recipient, rec: w.rec}
		if w.kind == frameOnce {
			s.pend.onces[w.once] = w.onceSeq
		}
		s.pendMu.Unlock()
		s.idx.add(w.recipient, w.id)
	case frameAck:
		s.idx.remove(w.recipient, w.gone)
		s.pendMu.Lock()
		for _, id := range w.gone {
			if _, ok := s.pend.recs[id]; ok {
				delete(s.pend.recs, id)
			} else {
				s.pend.acks = append(s.pend.acks, logKey(id, w.recipient))
			}
		}
		s.pendMu.Unlock()
		s.nAcked.Add(uint64(len(w.gone)))
	}
}

// onceStored reports whether a PostOnce id is stored: logged since the
// last checkpoint, or in the file's once bucket.
func (s *Store) onceStored(id string) bool {
	s.pendMu.RLock()
	_, ok := s.pend.onces[id]
	s.pendMu.RUnlock()
	if ok {
		return true
	}
	found := false
	s.view(func(tx *bolt.Tx) error {
		if once := tx.Bucket(onceBucket); once != nil {
			found = once.Get([]byte(id)) != nil
		}
		return nil
	})
	return found
}

// checkpoint writes what is pending into the bbolt file in one ordinary
// (synced) transaction, with the log's epoch as the mark, then starts the
// log's next epoch: from then on replay ignores every frame written so
// far. fns run in the same transaction; if it fails, the checkpoint is
// done again without them and then each in a transaction of its own, so
// that one failing function fails alone: fnErrs are their results. Only
// the leader, or Open or Close alone, calls it.
func (s *Store) checkpoint(fns []func(*bolt.Tx) error) (fnErrs []error, err error) {
	l := s.log
	write := func(tx *bolt.Tx, fns []func(*bolt.Tx) error) error {
		meta := tx.Bucket(metaBucket)
		log := tx.Bucket(logBucket)
		log.FillPercent = logFillPercent
		for _, id := range slices.Sorted(maps.Keys(s.pend.recs)) { // in id order: appends
			p := s.pend.recs[id]
			if err := log.Put(logKey(id, p.recipient), p.rec); err != nil {
				return err
			}
		}
		for _, k := range s.pend.acks {
			if err := log.Delete(k); err != nil {
				return err
			}
		}
		if len(s.pend.onces) > 0 {
			once, err := tx.CreateBucketIfNotExists(onceBucket)
			if err != nil {
				return err
			}
			for id, seq := range s.pend.onces {
				if err := once.Put([]byte(id), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
					return err
				}
			}
		}
		if s.lastID > meta.Sequence() {
			if err := meta.SetSequence(s.lastID); err != nil {
				return err
			}
		}
		if err := meta.Put(logMarkKey, binary.BigEndian.AppendUint64(nil, l.epoch)); err != nil {
			return err
		}
		for _, fn := range fns {
			if err := fn(tx); err != nil {
				return err
			}
		}
		// A function may have given ids (the tests' do): never give
		// them again.
		s.lastID = max(s.lastID, meta.Sequence())
		if checkpointing != nil {
			checkpointing("written")
		}
		return nil
	}
	fnErrs = make([]error, len(fns))
	err = s.update(func(tx *bolt.Tx) error { return write(tx, fns) })
	alone := err != nil && len(fns) > 0
	if alone {
		err = s.update(func(tx *bolt.Tx) error { return write(tx, nil) })
	}
	if err != nil {
		for i := range fnErrs {
			fnErrs[i] = err
		}
		return fnErrs, err
	}
	if checkpointing != nil {
		checkpointing("committed")
	}
	s.pendMu.Lock()
	s.pend = newPending()
	s.pendMu.Unlock()
	l.epoch++
	l.seq, l.tail, l.broken = 0, 0, false
	s.nCheckpoints.Add(1)
	if alone {
		for i, fn := range fns {
			fnErrs[i] = s.update(fn)
		}
	}
	return fnErrs, nil
}

// replayLog opens the log beside the file, brings back into memory what
// it holds past the file's mark, and checkpoints it, so that the Store
// starts with an empty log of a new epoch. A log whose flushed frames are
// damaged (a frame of a later commit follows one that fails its checks)
// is refused: replaying only what comes before the damage would lose
// acknowledged messages without a word.
func (s *Store) replayLog() error {
	var mark, seq uint64
	err := s.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		seq = meta.Sequence()
		if v := meta.Get(logMarkKey); len(v) == 8 {
			mark = binary.BigEndian.Uint64(v)
		} else if v != nil {
			return fmt.Errorf("%w: the log mark is %d bytes, not 8", ErrCorrupt, len(v))
		}
		return nil
	})
	if err != nil {
		return err
	}
	path := LogPath(s.path)
	if s.log, err = openLog(path); err != nil {
		return err
	}
	s.log.epoch = mark + 1
	s.lastID = seq
	b, err := readLog(path)
	if err != nil {
		return fmt.Errorf("mailbox: log %s: %w", path, err)
	}
	sc := scanLog(b, s.log.epoch)
	if sc.damaged != nil {
		return fmt.Errorf("%w: log %s: %v", ErrCorrupt, path, sc.damaged)
	}
	for _, f := range sc.frames {
		w := &write{kind: f.kind, recipient: f.recipient, once: f.once, onceSeq: f.onceSeq, id: f.id, rec: f.rec}
		if f.kind == frameAck {
			w.gone = s.idx.has(f.recipient, f.ids)
		}
		s.apply(w)
		s.lastID = max(s.lastID, f.id)
	}
	s.nAcked.Store(0) // replayed acks are not this Store's work
	_, err = s.checkpoint(nil)
	s.nCheckpoints.Store(0)
	return err
}
