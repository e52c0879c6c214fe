package diag

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestTokenBucketAdmitsNine shows why the Gate is not an x/time/rate
// Limiter: a token bucket with burst 5 refilling 5 per 10 s lets 9 of these
// arrivals through within 10 s (5 at once, then one every 2 s), where the
// rule allows 5. The Gate, fed the same arrivals, delivers 5.
func TestTokenBucketAdmitsNine(t *testing.T) {
	lim := rate.NewLimiter(rate.Every(Window/MaxPerWindow), MaxPerWindow)
	g := NewGate()
	var bucket, gate []time.Duration // arrival offsets let through
	for i := range 100 {             // one report every 100 ms during [0, 10s)
		at := time.Duration(i) * 100 * time.Millisecond
		if lim.AllowN(t0.Add(at), 1) {
			bucket = append(bucket, at)
		}
		if g.Admit(distinct(i), t0.Add(at)) == Delivered {
			gate = append(gate, at)
		}
	}
	t.Logf("token bucket: %v", bucket)
	t.Logf("gate:         %v", gate)
	if len(bucket) != 9 {
		t.Errorf("token bucket let %d through in [0, 10s), want the 9 the package doc claims", len(bucket))
	}
	if len(gate) != MaxPerWindow {
		t.Errorf("gate delivered %d in [0, 10s), want %d", len(gate), MaxPerWindow)
	}
}
