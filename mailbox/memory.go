package mailbox

import (
	"fmt"
	"slices"
	"sync"

	"github.com/diagrelay/diagrelay/diag"
)

// Memory is a mailbox held in memory, for tests and for embedding a relay
// in a process that needs no durability. Its contents are lost with it.
// It is safe for concurrent use; the zero value is not usable, call
// NewMemory.
type Memory struct {
	mu     sync.Mutex
	lastID uint64
	// boxes holds each recipient's unacknowledged entries in id order.
	// A recipient with none has no key.
	boxes map[string][]Entry
}

// NewMemory returns an empty in-memory mailbox. Its first id is 1.
func NewMemory() *Memory {
	return &Memory{boxes: make(map[string][]Entry)}
}

// Post stores m under the next id. It returns an error, and stores nothing,
// when m breaks the package limits (no recipient, too long, a time outside
// years 0 to 9999). m.At is kept in UTC without its monotonic reading, as
// Store keeps it.
func (mb *Memory) Post(m diag.ParentMessage) error {
	if err := validate(&m); err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	m.At = m.At.UTC()
	mb.mu.Lock()
	defer mb.mu.Unlock()
	mb.lastID++
	mb.boxes[m.Recipient] = append(mb.boxes[m.Recipient], Entry{ID: mb.lastID, ParentMessage: m})
	return nil
}

// Read returns recipient's unacknowledged entries, oldest first, at most
// limit of them (DefaultReadLimit if limit <= 0, never more than
// MaxReadLimit). It does not remove them: Ack does. The slice is never nil.
func (mb *Memory) Read(recipient string, limit int) ([]Entry, error) {
	limit = readLimit(limit)
	mb.mu.Lock()
	defer mb.mu.Unlock()
	box := mb.boxes[recipient]
	out := make([]Entry, min(limit, len(box)))
	copy(out, box)
	return out, nil
}

// ReadPage is Read as a Page: memory holds no damaged records, so Damaged
// is always empty. The error is always nil.
func (mb *Memory) ReadPage(recipient string, limit int) (Page, error) {
	es, err := mb.Read(recipient, limit)
	return Page{Messages: es, Damaged: []uint64{}}, err
}

// Ack removes recipient's unacknowledged entries whose ids are in ids and
// returns how many it removed. Ids that are unknown, already acknowledged,
// repeated, or another recipient's are ignored. The error is always nil.
func (mb *Memory) Ack(recipient string, ids []uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	want := slices.Clone(ids)
	slices.Sort(want)
	want = slices.Compact(want)

	mb.mu.Lock()
	defer mb.mu.Unlock()
	box, ok := mb.boxes[recipient]
	if !ok {
		return 0, nil
	}
	// Both box and want are sorted by id: one merge pass finds the matches
	// and compacts box in place.
	kept := box[:0]
	acked, j := 0, 0
	for _, e := range box {
		for j < len(want) && want[j] < e.ID {
			j++
		}
		if j < len(want) && want[j] == e.ID {
			acked++
			continue
		}
		kept = append(kept, e)
	}
	clear(box[len(kept):]) // let the removed strings be collected
	if len(kept) == 0 {
		delete(mb.boxes, recipient)
	} else {
		mb.boxes[recipient] = kept
	}
	return acked, nil
}
