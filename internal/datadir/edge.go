package datadir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// EdgeFile holds a cluster edge's identity (docs/cluster.md): its name,
// kept across restarts so that a restarted edge is the same edge and keeps
// its claims. Holding the file open (bbolt's lock) keeps two edges from
// sharing one identity.
const EdgeFile = "edge.db"

var edgeBucket, edgeNameKey = []byte("edge"), []byte("name")

// Edge is an edge's hold on its data directory.
type Edge struct {
	Name string
	db   *bolt.DB
}

// Close lets another process hold the identity.
func (e *Edge) Close() error { return e.db.Close() }

// OpenEdge opens dir's edge identity, creating the directory (0700) and
// the identity if missing: named want, or, if want is "", "edge-" and 8
// random hex digits. A name already kept there wins; a different want is
// an error (the name is the identity: claims are held under it).
func OpenEdge(dir, want string, valid func(string) bool) (*Edge, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := CheckPermissions(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, EdgeFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("another diagrelay serve holds the edge identity in %s: stop it, or give this one another --data DIR", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("edge identity %s: %w", path, err)
	}
	var name string
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(edgeBucket)
		if err != nil {
			return err
		}
		if v := b.Get(edgeNameKey); v != nil {
			name = string(v)
			return nil
		}
		name = want
		if name == "" {
			var r [4]byte
			_, _ = rand.Read(r[:])
			name = "edge-" + hex.EncodeToString(r[:])
		}
		if !valid(name) {
			return fmt.Errorf("edge name %q: 1 to 64 of [A-Za-z0-9_-]", name)
		}
		return b.Put(edgeNameKey, []byte(name))
	})
	switch {
	case err == nil && !valid(name):
		err = fmt.Errorf("%s holds the edge name %q, which is not a name", path, name)
	case err == nil && want != "" && want != name:
		err = fmt.Errorf("this data directory is the edge %q, not %q: an edge keeps its name (give another --data DIR for a new edge)", name, want)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Edge{Name: name, db: db}, nil
}
