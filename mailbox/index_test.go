package mailbox

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// Acking the oldest entries, as readers do, gives back the memory they
// held: the index costs about 8 bytes per unacknowledged entry, not per
// entry it ever had.
func TestIndexRemoveGivesBackThePrefix(t *testing.T) {
	const n, keep = 1 << 20, 10 // 8 MiB of ids
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	x := newIndex()
	for _, spare := range []int{0, n / 4} { // an array full to the brim, or with room
		t.Run(fmt.Sprint("spare ", spare), func(t *testing.T) {
			ids := make([]uint64, n, n+spare)
			for i := range ids {
				ids[i] = uint64(i + 1)
			}
			x.ids["/root"] = ids
			gone := slices.Clone(ids[:n-keep])
			ids = nil
			before := heap()
			x.remove("/root", gone)
			gone = nil
			after := heap()
			if s := x.ids["/root"]; len(s) != keep || s[0] != n-keep+1 || !slices.IsSorted(s) {
				t.Fatalf("ids after the ack: %v", s)
			}
			// The ids' array and gone's, 8 MiB each, go.
			if freed := int64(before) - int64(after); freed < 12<<20 {
				t.Errorf("acking %d of %d ids freed %d bytes, want at least the 16 MiB their arrays held less 4 MiB", n-keep, n, freed)
			}
		})
	}
}
