package mailbox

import (
	"encoding/binary"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/diag"
)

// idKey is an entry's key in the first and second editions' per-recipient
// buckets: the id alone.
func idKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id)
}

// oldEntry is one entry of a first- or second-edition file: its id, the
// recipient bucket it is filed under, and the record (nil: m's record in
// the edition's format).
type oldEntry struct {
	id        uint64
	recipient string
	m         diag.ParentMessage
	rec       []byte
}

// writeOldFile writes a mailbox file as the first (tag formatTagV1,
// records without checksums) or second edition (formatTagV2) wrote it:
// one nested bucket per recipient under recipients, the last id given as
// meta's sequence. extra, if not nil, damages it further in the same
// transaction.
func writeOldFile(t testing.TB, path string, tag []byte, entries []oldEntry, extra func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		meta.Put(formatKey, tag)
		boxes, err := tx.CreateBucket(recipientsBucket)
		if err != nil {
			return err
		}
		var last uint64
		for _, e := range entries {
			box, err := boxes.CreateBucketIfNotExists([]byte(e.recipient))
			if err != nil {
				return err
			}
			rec := e.rec
			if rec == nil && string(tag) == string(formatTagV1) {
				rec = encodeRecordV1(nil, &e.m)
			} else if rec == nil {
				rec = encodeRecord(e.id, &e.m)
			}
			if err := box.Put(idKey(e.id), rec); err != nil {
				return err
			}
			last = max(last, e.id)
		}
		if err := meta.SetSequence(last); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// fileFormat is the format tag of the closed mailbox file at path.
func fileFormat(t testing.TB, path string) string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tag string
	db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(metaBucket); meta != nil {
			tag = string(meta.Get(formatKey))
		}
		return nil
	})
	return tag
}
