package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A report or counts message is placed under the token entry it names: it
// counts only if that entry shows the publishing edge's claim, for the
// message's thread. A read of the bucket can fail (a node down, a leader
// election) or lag (a replica that has not yet applied the claim), and
// neither says the claim is absent; so the home decides only on what the
// bucket answered, and hands everything else back to the stream with a
// backoff (docs/cluster.md, "What the home checks").

// verdict is what the home does with a message after reading its entry.
type verdict int

const (
	// place: the entry shows this edge's claim for this thread: deliver.
	place verdict = iota
	// wait: the bucket has not answered, or answered with a state that a
	// later read may show claimed: Nak with a backoff, decide again.
	wait
	// refuse: the bucket proves the message can never be placed: Term.
	refuse
)

func (v verdict) String() string {
	switch v {
	case place:
		return "place"
	case wait:
		return "wait"
	}
	return "refuse"
}

// readEntryWait bounds one read of the bucket while a message waits: well
// under the consumer's ack wait, so the Nak reaches the stream before the
// message would be redelivered anyway.
const readEntryWait = 2 * time.Second

// maxNotFound is how many deliveries of a message may find no entry at all
// for its token before it is refused: a replica that lags behind the
// token's create (which happened before any edge could claim it, long
// before the report) catches up within seconds, and nakDelay's backoff
// makes these deliveries span more than a minute. A deleted entry (the
// home deletes one it cannot read) reads the same as a missing one.
const maxNotFound = 12

// judge decides on an entry the bucket answered: what changes an entry
// can go through is fixed (created open and unclaimed; claimed once, by
// one name; set closed), so a claim by another name, another thread, or a
// closed entry nobody claimed is final. An open entry not yet claimed is
// not: the answer may predate the claim.
func judge(e entry, edge, path string) (verdict, string) {
	switch {
	case e.Path != path:
		return refuse, fmt.Sprintf("the token is for thread %s, not this one", e.Path)
	case e.Edge == edge:
		return place, ""
	case e.Edge != "":
		return refuse, fmt.Sprintf("the token is claimed by %s, not this edge", e.Edge)
	case !e.Open:
		return refuse, "the token was closed before any edge claimed it"
	}
	return wait, "the bucket's answer does not show the claim yet"
}

// entryRead is one read of a key of the bucket; a Home reads with its
// link's KeyValue.Get, and a test may put a read that fails or lags first.
type entryRead func(ctx context.Context, key string) (jetstream.KeyValueEntry, error)

// place reads the entry of hash and judges a message of edge for path on
// it; delivered is how many times the stream has delivered the message. The
// index's entry is used when it already shows a claim (a claim never
// changes hands); otherwise the bucket is read.
func (h *Home) place(hash [32]byte, edge, path string, delivered uint64) (entry, verdict, string) {
	h.mu.Lock()
	e, ok := h.entries[hash]
	h.mu.Unlock()
	if ok && e.Edge != "" {
		v, why := judge(e, edge, path)
		return e, v, why
	}
	ctx, cancel := context.WithTimeout(h.ctx, readEntryWait)
	defer cancel()
	kve, err := h.read(ctx, tokenKey(hash))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound): // KeyValue.Get says so of a deleted key too
		if delivered >= maxNotFound {
			return entry{}, refuse, fmt.Sprintf("no entry for the token in %d deliveries", delivered)
		}
		return entry{}, wait, "no entry for the token yet"
	case err != nil:
		return entry{}, wait, "the bucket did not answer: " + err.Error()
	}
	fresh, err := decodeEntry(kve.Value())
	if err != nil {
		return entry{}, refuse, "the token's entry is unreadable: " + err.Error()
	}
	v, why := judge(fresh, edge, path)
	return fresh, v, why
}

// nakDelay is how long the stream holds back a message the home could not
// place yet, by how many times it has been delivered: 250 ms, doubling, at
// most 15 s, so a bucket that comes back is read again soon and one that
// stays away costs a read every 15 s per message.
func nakDelay(delivered uint64) time.Duration {
	const first, most = 250 * time.Millisecond, 15 * time.Second
	if delivered <= 1 {
		return first
	}
	if delivered > 8 {
		return most
	}
	return min(first<<(delivered-1), most)
}
