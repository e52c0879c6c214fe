package cluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/service"
)

// maxClaimRounds bounds the compare-and-set retries of one change to an
// entry: each lost round means another writer changed it in between.
const maxClaimRounds = 8

// errNoEntry is what casEntry's change is given for a key with no entry.
var errNoEntry = errors.New("no entry")

// seenEntry is an entry as a watch of the bucket brought it, with its
// revision.
type seenEntry struct {
	e   entry
	rev uint64
}

// casEntry reads key's entry and hands it to change, with errNoEntry for a
// missing key or the decoding's error; if change asks to write (its entry
// changed in place), the entry is written with a compare-and-set on the
// revision read, and on a lost race read and changed again. It returns the
// entry and its revision as last read or written; an error from change
// ends it with that error.
//
// seen, if not nil, stands in for the first read: the compare-and-set on
// its revision fails if the entry changed since, and the next round reads
// the bucket. So a claim of an entry the watch already brought costs one
// round trip to the stream, the synced write, not a read first.
func casEntry(ctx context.Context, kv jetstream.KeyValue, key string, seen *seenEntry, change func(e *entry, readErr error) (write bool, err error)) (entry, uint64, error) {
	for range maxClaimRounds {
		var e entry
		var rev uint64
		readErr := errNoEntry
		if seen != nil {
			e, rev, readErr = seen.e, seen.rev, nil
			seen = nil
		} else {
			kve, err := kv.Get(ctx, key)
			switch {
			case err == nil:
				rev = kve.Revision()
				e, readErr = decodeEntry(kve.Value())
			case !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted):
				return entry{}, 0, err
			}
		}
		write, err := change(&e, readErr)
		if err != nil || !write {
			return e, rev, err
		}
		rev, err = kv.Update(ctx, key, e.encode(), rev)
		if err == nil {
			return e, rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return entry{}, 0, err
		}
	}
	return entry{}, 0, fmt.Errorf("the entry kept changing (%d rounds)", maxClaimRounds)
}

// claim claims token's entry for name with a compare-and-set on the
// bucket: the first hello on a token, at any edge or the home, wins it;
// a claim already held by name is returned as it is (a restarted edge is
// the same edge).
//
// rev is the entry's revision that holds the claim: a watch may still bring
// older revisions of it afterwards, which say nothing about the claim.
// seen is the entry open and unclaimed as the watch last brought it, or
// nil (casEntry); only such an entry is taken without a read, since only
// the compare-and-set of a write checks that it is still current.
func claim(ctx context.Context, kv jetstream.KeyValue, name, token string, seen *seenEntry) (entry, uint64, error) {
	if seen != nil && (!seen.e.Open || seen.e.Edge != "") {
		seen = nil
	}
	e, rev, err := casEntry(ctx, kv, tokenKey(sha256.Sum256([]byte(token))), seen, func(e *entry, readErr error) (bool, error) {
		switch {
		case readErr == errNoEntry:
			return false, service.ErrTokenUnknown
		case readErr != nil:
			return false, fmt.Errorf("%w (%v)", service.ErrTokenUnknown, readErr)
		case !e.Open:
			return false, service.ErrTokenRevoked
		case e.Edge == name:
			return false, nil
		case e.Edge != "":
			return false, service.ErrTokenClaimed
		}
		e.Edge = name
		return true, nil
	})
	if err != nil && !errors.Is(err, service.ErrTokenUnknown) && !errors.Is(err, service.ErrTokenRevoked) && !errors.Is(err, service.ErrTokenClaimed) {
		err = fmt.Errorf("cluster: claim: %w", err)
	}
	return e, rev, err
}

func (e entry) directory() service.DirectoryEntry {
	return service.DirectoryEntry{Path: e.Path, Parent: e.Parent, Owner: e.Owner, Generation: e.Generation, Bind: e.Bind}
}
