package cluster

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// watchBucket calls seen for every token entry of the bucket, the current
// ones first, then each change as it comes (a deleted or unreadable entry
// with ok false), until ctx ends. ready gets nil once the current entries
// were seen, or the error that stopped the watch before that. A watch that
// breaks is started again after a short pause: revocation must keep
// reaching the edges.
func watchBucket(ctx context.Context, kv jetstream.KeyValue, log *slog.Logger, ready chan<- error, seen func(hash [32]byte, rev uint64, e entry, ok bool)) {
	first := true
	for ctx.Err() == nil {
		w, err := settle(ctx, func(ctx context.Context) (jetstream.KeyWatcher, error) { return kv.WatchAll(ctx) })
		if err != nil {
			if first {
				ready <- err
				return
			}
			log.Warn("cluster: bucket watch failed; retrying", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		for kve := range w.Updates() {
			if kve == nil { // the current entries are all seen
				if first {
					first = false
					ready <- nil
				}
				continue
			}
			hash, ok := parseTokenKey(kve.Key())
			if !ok {
				continue
			}
			if kve.Operation() != jetstream.KeyValuePut {
				seen(hash, kve.Revision(), entry{}, false)
				continue
			}
			e, err := decodeEntry(kve.Value())
			if err != nil {
				log.Warn("cluster: unreadable entry in the bucket", "key", kve.Key(), "err", err)
			}
			seen(hash, kve.Revision(), e, err == nil)
		}
		_ = w.Stop()
		if ctx.Err() == nil {
			log.Warn("cluster: bucket watch ended; starting it again")
			sleep(ctx, 250*time.Millisecond)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// watch keeps the home's index of the bucket.
func (h *Home) watch(ready chan<- error) {
	watchBucket(h.ctx, h.l.kv, h.log, ready, func(hash [32]byte, _ uint64, e entry, ok bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if ok {
			h.indexLocked(hash, e)
		} else {
			h.unindexLocked(hash)
		}
	})
}

func (h *Home) indexLocked(hash [32]byte, e entry) {
	if old, ok := h.entries[hash]; ok && old.Path != e.Path {
		h.unindexLocked(hash)
	}
	h.entries[hash] = e
	keys := h.byPath[e.Path]
	if keys == nil {
		keys = make(map[[32]byte]bool)
		h.byPath[e.Path] = keys
	}
	keys[hash] = e.Open
	if !e.Open {
		delete(keys, hash) // closed tokens need no more revoking
	}
}

func (h *Home) unindexLocked(hash [32]byte) {
	e, ok := h.entries[hash]
	if !ok {
		return
	}
	delete(h.entries, hash)
	if keys := h.byPath[e.Path]; keys != nil {
		delete(keys, hash)
		if len(keys) == 0 {
			delete(h.byPath, e.Path)
		}
	}
}
