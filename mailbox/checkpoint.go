package mailbox

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// What one epoch of the log holds that the bbolt file does not yet
// (docs/mailbox.md, "One flush a commit"): kept in memory from the commit
// that logged it to the checkpoint that writes it into the file, so that
// reads need not parse the log. Bounded by checkpointAt (see
// maybeCheckpoint).
type pendingState struct {
	// epoch is the log's epoch these are of: once the file's log mark is
	// at epoch or past it, a checkpoint has written them into the file.
	epoch uint64
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

func newPending(epoch uint64) pendingState {
	return pendingState{epoch: epoch, recs: map[uint64]pendingRec{}, onces: map[string]uint64{}}
}

// logMarkKey, in meta, holds the epoch (8 bytes, big-endian) of the last
// log whose every frame a checkpoint wrote into the file; the log being
// written is of the next epoch. Absent: 0.
var logMarkKey = []byte("logmark")

// checkpointing, if not nil, is called in each checkpoint: with "written"
// when its transaction is written but not committed, with "committed"
// when it is committed but what it wrote not yet dropped from memory. The
// crash tests' cue to kill.
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
	if !ok && s.frozen != nil {
		_, ok = s.frozen.onces[id]
	}
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

// writeCheckpoint writes states, oldest first, into the file: their
// records, then their acks' deletions, then their once ids; raises the
// id sequence to lastID; sets the mark to epoch; and tags the file as
// one a Store has open (formatTagOpen), or not if closing.
func writeCheckpoint(tx *bolt.Tx, states []*pendingState, lastID, epoch uint64, closing bool) error {
	meta := tx.Bucket(metaBucket)
	log := tx.Bucket(logBucket)
	log.FillPercent = logFillPercent
	for _, st := range states {
		for _, id := range slices.Sorted(maps.Keys(st.recs)) { // in id order: appends
			p := st.recs[id]
			if err := log.Put(logKey(id, p.recipient), p.rec); err != nil {
				return err
			}
		}
		for _, k := range st.acks {
			if err := log.Delete(k); err != nil {
				return err
			}
		}
		if len(st.onces) > 0 {
			once, err := tx.CreateBucketIfNotExists(onceBucket)
			if err != nil {
				return err
			}
			for id, seq := range st.onces {
				if err := once.Put([]byte(id), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
					return err
				}
			}
		}
	}
	if lastID > meta.Sequence() {
		if err := meta.SetSequence(lastID); err != nil {
			return err
		}
	}
	if err := meta.Put(logMarkKey, binary.BigEndian.AppendUint64(nil, epoch)); err != nil {
		return err
	}
	tag := formatTagOpen
	if closing {
		tag = formatTag
	}
	if err := meta.Put(formatKey, tag); err != nil {
		return err
	}
	if checkpointing != nil {
		checkpointing("written")
	}
	return nil
}

// maybeCheckpoint runs after each commit in the leader. Past checkpointAt
// of log it freezes the epoch's pending state, starts the log's next
// epoch in the other file, and checkpoints the frozen one in the
// background (freeze), so that commits go on meanwhile; if the last
// background checkpoint failed, it checkpoints everything itself. A
// commit that would take the epoch past maxLog waits (makeRoom).
func (s *Store) maybeCheckpoint() {
	if s.log.tail < checkpointAt {
		return
	}
	if s.bg != nil {
		select {
		case <-s.bg:
			s.bg = nil
		default:
			return
		}
	}
	if s.frozen != nil { // the background checkpoint failed
		s.checkpointNow(nil)
		return
	}
	s.freeze()
}

// makeRoom begins the log's next epoch for a commit that does not fit in
// the live one: once the background checkpoint has ended, by freezing the
// live epoch for the next; if it failed, by checkpointing both now. The
// error of that checkpoint means no room: the log is at its bound and
// the memory with it (what the two epochs hold), and writes are refused
// until a checkpoint succeeds.
func (s *Store) makeRoom() error {
	s.waitBackground()
	if s.frozen == nil {
		s.freeze()
		return nil
	}
	_, err := s.checkpointNow(nil)
	return err
}

// freeze freezes the live epoch's pending state, starts the next epoch,
// and checkpoints the frozen one in a goroutine. No background checkpoint
// may be running, and none may have failed (frozen is nil).
func (s *Store) freeze() {
	s.pendMu.Lock()
	frozen := s.pend
	s.frozen, s.pend = &frozen, newPending(s.epoch+1)
	s.pendMu.Unlock()
	epoch, lastID := s.epoch, s.lastID
	s.nextEpoch()
	done := make(chan struct{})
	s.bg = done
	go func() {
		defer close(done)
		err := s.update(func(tx *bolt.Tx) error {
			return writeCheckpoint(tx, []*pendingState{&frozen}, lastID, epoch, false)
		})
		if err != nil {
			return // s.frozen stays, for the leader's checkpointNow
		}
		if checkpointing != nil {
			checkpointing("committed")
		}
		s.pendMu.Lock()
		s.frozen = nil
		s.pendMu.Unlock()
		s.nCheckpoints.Add(1)
	}()
}

// waitBackground waits for the background checkpoint, if one runs.
func (s *Store) waitBackground() {
	if s.bg != nil {
		<-s.bg
		s.bg = nil
	}
}

// nextEpoch starts the log's next epoch, in the other file, from its
// start. That file's frames are of an epoch that a checkpoint has written
// into the file (two epochs back), so replay ignores them.
func (s *Store) nextEpoch() {
	s.epoch++
	s.log = s.logs[s.epoch%2]
	s.log.seq, s.log.tail, s.log.broken = 0, 0, false
}

// checkpointNow writes everything pending (the frozen epoch, if its
// background checkpoint failed, and the live one) into the file in one
// ordinary (synced) transaction, with the live epoch as the mark, then
// starts the next epoch: from then on replay ignores every frame written
// so far. fns run in the same transaction; if it fails, the checkpoint is
// done again without them and then each in a transaction of its own, so
// that one failing function fails alone: fnErrs are their results. Only
// the leader, or Open or Close alone, calls it.
func (s *Store) checkpointNow(fns []func(*bolt.Tx) error) (fnErrs []error, err error) {
	s.waitBackground()
	states := []*pendingState{&s.pend}
	if s.frozen != nil {
		states = []*pendingState{s.frozen, &s.pend}
	}
	write := func(fns []func(*bolt.Tx) error) error {
		return s.update(func(tx *bolt.Tx) error {
			if err := writeCheckpoint(tx, states, s.lastID, s.epoch, s.closed); err != nil {
				return err
			}
			for _, fn := range fns {
				if err := fn(tx); err != nil {
					return err
				}
			}
			// A function may have given ids (the tests' do): never give
			// them again.
			s.lastID = max(s.lastID, tx.Bucket(metaBucket).Sequence())
			return nil
		})
	}
	fnErrs = make([]error, len(fns))
	err = write(fns)
	alone := err != nil && len(fns) > 0
	if alone {
		err = write(nil)
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
	s.frozen, s.pend = nil, newPending(s.epoch+1)
	s.pendMu.Unlock()
	s.nextEpoch()
	s.nCheckpoints.Add(1)
	if alone {
		for i, fn := range fns {
			fnErrs[i] = s.update(fn)
		}
	}
	return fnErrs, nil
}

// replayLog opens the log's two files beside the file, brings back into
// memory what they hold past the file's mark (the mark's next epoch, then
// the one after it), and checkpoints it, so that the Store starts with an
// empty log of a new epoch. A log whose flushed frames are damaged is
// refused (see scanEpochs): replaying only what comes before the damage
// would lose acknowledged messages without a word.
func (s *Store) replayLog() error {
	var mark, seq uint64
	err := s.view(func(tx *bolt.Tx) (err error) {
		seq = tx.Bucket(metaBucket).Sequence()
		mark, err = readMark(tx)
		return err
	})
	if err != nil {
		return err
	}
	paths := LogPaths(s.path)
	for i, p := range paths {
		if s.logs[i], err = openLog(p); err != nil {
			return err
		}
	}
	s.lastID = seq
	sc, err := scanEpochs(paths, mark)
	if err != nil {
		return err
	}
	if sc.damaged != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, sc.damaged)
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
	s.epoch = mark + 2
	s.pend.epoch = s.epoch // it holds mark+1's too: the checkpoint below writes both
	s.log = s.logs[s.epoch%2]
	_, err = s.checkpointNow(nil)
	s.nCheckpoints.Store(0)
	return err
}

// readMark reads the file's log mark (0 if it has none).
func readMark(tx *bolt.Tx) (uint64, error) {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		return 0, nil
	}
	switch v := meta.Get(logMarkKey); {
	case len(v) == 8:
		return binary.BigEndian.Uint64(v), nil
	case v != nil:
		return 0, fmt.Errorf("%w: the log mark is %d bytes, not 8", ErrCorrupt, len(v))
	}
	return 0, nil
}
