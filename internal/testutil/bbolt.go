package testutil

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BoltUsedBytes is how many bytes of the bbolt file at path its pages use
// (the file may be longer): where a test damages a file, damage there
// lands on data bbolt reads.
func BoltUsedBytes(t testing.TB, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return int(n)
}
