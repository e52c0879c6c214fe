package mailbox

import (
	"slices"
	"sync"
)

// index is which ids of log are whose: for each recipient with entries,
// its ids in increasing order. It is derived from log's keys (built at
// Open, kept by Post and Ack after each commit), so it is never written
// and a crash cannot leave it wrong. It costs 8 bytes per unacknowledged
// entry.
type index struct {
	mu  sync.Mutex
	ids map[string][]uint64
}

func newIndex() *index { return &index{ids: map[string][]uint64{}} }

// add records that recipient has id. Ids come in increasing order from
// commits; one out of order (possible only from the solo retry of a failed
// batch) is put in its place.
func (x *index) add(recipient string, id uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.ids[recipient]
	if n := len(s); n == 0 || s[n-1] < id {
		x.ids[recipient] = append(s, id)
		return
	}
	if i, found := slices.BinarySearch(s, id); !found {
		x.ids[recipient] = slices.Insert(s, i, id)
	}
}

// after returns a copy of at most n of recipient's ids greater than id
// (from the first if first is true), lowest first.
func (x *index) after(recipient string, id uint64, first bool, n int) []uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.ids[recipient]
	i, found := slices.BinarySearch(s, id)
	if first {
		i = 0
	} else if found {
		i++
	}
	s = s[i:]
	return slices.Clone(s[:min(n, len(s))])
}

// has returns those of ids that recipient has, each once, in the order
// given.
func (x *index) has(recipient string, ids []uint64) []uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.ids[recipient]
	var found []uint64
	var seen map[uint64]bool // for many ids; few are searched in found
	if len(ids) > 32 {
		seen = make(map[uint64]bool, len(ids))
	}
	for _, id := range ids {
		if _, ok := slices.BinarySearch(s, id); !ok {
			continue
		}
		if seen != nil {
			if seen[id] {
				continue
			}
			seen[id] = true
		} else if slices.Contains(found, id) {
			continue
		}
		found = append(found, id)
	}
	return found
}

// remove forgets recipient's ids in gone.
func (x *index) remove(recipient string, gone []uint64) {
	if len(gone) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.ids[recipient]
	held := cap(s) // the array's, which s[k:] below no longer shows
	drop := make(map[uint64]bool, len(gone))
	for _, id := range gone {
		drop[id] = true
	}
	// Readers ack oldest first: a prefix goes without moving the rest.
	k := 0
	for k < len(s) && drop[s[k]] {
		k++
	}
	s = s[k:]
	if k < len(gone) {
		s = slices.DeleteFunc(s, func(id uint64) bool { return drop[id] })
	}
	if len(s) == 0 {
		delete(x.ids, recipient)
		return
	}
	if held > 2*len(s)+64 { // give back what the acked prefix held
		s = slices.Clone(s)
	}
	x.ids[recipient] = s
}
