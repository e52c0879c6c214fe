package cluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/service"
)

// maxClaimRounds bounds the compare-and-set retries of one claim: each
// lost round means another writer changed the entry in between.
const maxClaimRounds = 8

// claim claims token's entry for name with a compare-and-set on the
// bucket: the first hello on a token, at any edge or the home, wins it;
// a claim already held by name is returned as it is (a restarted edge is
// the same edge).
//
// rev is the entry's revision that holds the claim: a watch may still bring
// older revisions of it afterwards, which say nothing about the claim.
func claim(ctx context.Context, kv jetstream.KeyValue, name, token string) (e entry, rev uint64, err error) {
	h := sha256.Sum256([]byte(token))
	key := tokenKey(h)
	for range maxClaimRounds {
		kve, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			return entry{}, 0, service.ErrTokenUnknown
		}
		if err != nil {
			return entry{}, 0, fmt.Errorf("cluster: claim: %w", err)
		}
		e, err := decodeEntry(kve.Value())
		switch {
		case err != nil:
			return entry{}, 0, fmt.Errorf("%w (%v)", service.ErrTokenUnknown, err)
		case !e.Open:
			return e, 0, service.ErrTokenRevoked
		case e.Edge == name:
			return e, kve.Revision(), nil
		case e.Edge != "":
			return e, 0, service.ErrTokenClaimed
		}
		e.Edge = name
		rev, err := kv.Update(ctx, key, e.encode(), kve.Revision())
		if err == nil {
			return e, rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return entry{}, 0, fmt.Errorf("cluster: claim: %w", err)
		}
	}
	return entry{}, 0, fmt.Errorf("cluster: claim: the entry kept changing (%d rounds)", maxClaimRounds)
}

func (e entry) directory() service.DirectoryEntry {
	return service.DirectoryEntry{Path: e.Path, Parent: e.Parent, Owner: e.Owner, Generation: e.Generation, Bind: e.Bind}
}
