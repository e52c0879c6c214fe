package mailbox

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// migrateChunk bounds the entries one migration transaction moves, so that
// migrating a large mailbox needs bounded memory (bbolt holds a write
// transaction's dirty pages in memory). A variable only so that the crash
// test can make migrations of many chunks quickly.
var migrateChunk = 10000

// migrated, if not nil, is called after each migration transaction has
// committed, with the entries it moved: the crash test's cue to kill.
var migrated func(moved int)

// migrate brings a first- or second-edition file (one bucket per recipient
// under recipients) to the third edition's single log, in place, in
// transactions of at most migrateChunk entries. The first transaction
// also retags the file, so that from then on it is a third-edition file
// that may still hold entries under recipients; every Open moves what is
// left (normally nothing), so a migration that a crash interrupted goes
// on at the next Open. Each transaction moves entries (a Put to log and a
// Delete from recipients) atomically, so a kill -9 at any moment leaves
// every entry exactly once, in one place or the other, and both places
// are read by Check. Record bytes are moved as they are: a record's
// checksum covers its id and content, not where it is filed, so a record
// damaged before the migration is damaged after it, and a first-edition
// record stays unchecked. Entries that are not records (a key that is no
// id, a bucket where a record goes, a value where a recipient's bucket
// goes) stay under recipients, where Check counts them.
func (s *Store) migrate() error {
	for {
		moved, nMoved := false, 0
		err := s.update(func(tx *bolt.Tx) error {
			moved, nMoved = false, 0
			meta := tx.Bucket(metaBucket)
			if !bytes.Equal(meta.Get(formatKey), formatTag) {
				if err := meta.Put(formatKey, formatTag); err != nil {
					return err
				}
			}
			log, err := tx.CreateBucketIfNotExists(logBucket)
			if err != nil {
				return err
			}
			boxes := tx.Bucket(recipientsBucket)
			if boxes == nil {
				return nil
			}
			// Gather first, then move: bbolt's cursors are not to be
			// trusted across a Delete under them.
			type entry struct{ name, id, rec []byte }
			var move []entry
			rc := boxes.Cursor()
			for name, v := rc.First(); name != nil && len(move) < migrateChunk; name, v = rc.Next() {
				box := boxes.Bucket(name)
				if v != nil || box == nil {
					continue
				}
				c := box.Cursor()
				for k, v := c.First(); k != nil && len(move) < migrateChunk; k, v = c.Next() {
					if len(k) == 8 && v != nil {
						move = append(move, entry{bytes.Clone(name), bytes.Clone(k), bytes.Clone(v)})
					}
				}
			}
			var emptied [][]byte
			for i, e := range move {
				if err := log.Put(logKey(binary.BigEndian.Uint64(e.id), string(e.name)), e.rec); err != nil {
					return err
				}
				box := boxes.Bucket(e.name)
				if err := box.Delete(e.id); err != nil {
					return err
				}
				moved = true
				nMoved++
				if last := i == len(move)-1 || !bytes.Equal(move[i+1].name, e.name); last {
					if first, _ := box.Cursor().First(); first == nil {
						emptied = append(emptied, e.name)
					}
				}
			}
			for _, name := range emptied {
				if err := boxes.DeleteBucket(name); err != nil {
					return err
				}
			}
			if first, _ := boxes.Cursor().First(); first == nil {
				return tx.DeleteBucket(recipientsBucket)
			}
			return nil
		})
		if err != nil || !moved {
			return err
		}
		if migrated != nil {
			migrated(nMoved)
		}
	}
}
