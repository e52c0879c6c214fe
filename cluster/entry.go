package cluster

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/diagrelay/diagrelay/threadpath"
)

// entry is the value of a token's key in the bucket (docs/cluster.md):
// written by the home at runtime.open, claimed by one edge (or the home)
// at the token's first hello with a compare-and-set, and set closed by the
// home at reopen or close, which revokes it everywhere.
type entry struct {
	V          int       `json:"v"` // entryVersion
	Path       string    `json:"path"`
	Parent     string    `json:"parent"`
	Owner      string    `json:"owner"`
	Generation uint64    `json:"generation"`
	Open       bool      `json:"open"`
	Bind       bool      `json:"bind"`           // bound to the first process that says hello with it
	Edge       string    `json:"edge,omitempty"` // who claimed it: an edge's name, or HomeName
	OpenedAt   time.Time `json:"opened_at"`
}

const entryVersion = 1

// tokenKey is the bucket key of a token's hash.
func tokenKey(hash [32]byte) string { return "t." + hex.EncodeToString(hash[:]) }

// parseTokenKey is tokenKey's inverse.
func parseTokenKey(key string) ([32]byte, bool) {
	var h [32]byte
	if len(key) != 2+64 || key[:2] != "t." {
		return h, false
	}
	_, err := hex.Decode(h[:], []byte(key[2:]))
	return h, err == nil
}

func (e *entry) encode() []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // plain fields: cannot fail
	}
	return b
}

// decodeEntry decodes and checks a bucket value: anyone who can write the
// bucket can write it, so it is held to the same rules as runtime.open's
// params.
func decodeEntry(b []byte) (entry, error) {
	var e entry
	if len(b) > maxMessageBytes {
		return e, fmt.Errorf("cluster: entry of %d bytes", len(b))
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("cluster: entry: %w", err)
	}
	if e.V != entryVersion {
		return e, fmt.Errorf("cluster: entry version %d, this diagrelay reads %d", e.V, entryVersion)
	}
	if err := threadpath.Validate(e.Path); err != nil {
		return e, fmt.Errorf("cluster: entry: %w", err)
	}
	if e.Parent != threadpath.LexicalParent(e.Path) {
		return e, fmt.Errorf("cluster: entry: parent %q is not the lexical parent of %s", e.Parent, e.Path)
	}
	if e.Parent == "" {
		if err := threadpath.Validate(e.Owner); err != nil {
			return e, fmt.Errorf("cluster: entry: owner: %w", err)
		}
	} else if e.Owner != "" {
		return e, fmt.Errorf("cluster: entry: a nested thread has no owner")
	}
	if e.Edge != "" && !ValidName(e.Edge) {
		return e, fmt.Errorf("cluster: entry: edge name %q", e.Edge)
	}
	return e, nil
}

// ValidName reports whether s may name an edge: a NATS subject token we
// choose to keep to [A-Za-z0-9_-], 1 to 64 bytes.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
