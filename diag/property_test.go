package diag

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// stepGen draws the time between two reports, weighted toward the
// interesting values: none, the window edge and just before it, and
// backwards steps.
var stepGen = rapid.OneOf(
	rapid.SampledFrom([]time.Duration{
		0,
		time.Nanosecond,
		Window,
		Window - time.Millisecond, // 9.999 s
		Window - time.Nanosecond,
		Window / 5,
		-time.Nanosecond,
		-time.Second,
	}),
	durationRange(0, 3*time.Second),
	durationRange(0, 25*time.Second),
	durationRange(-15*time.Second, 0),
)

func durationRange(min, max time.Duration) *rapid.Generator[time.Duration] {
	return rapid.Map(rapid.Int64Range(int64(min), int64(max)),
		func(v int64) time.Duration { return time.Duration(v) })
}

var reportGen = rapid.Map(rapid.OneOf(
	rapid.IntRange(0, smallPool-1),
	rapid.IntRange(0, len(reportPool)-1),
), func(i int) Report { return reportPool[i] })

// TestGateMatchesReference compares every verdict and every counter with the
// brute-force reference over random sequences, and checks the limits on
// what was delivered. A quarter of the steps go to the window edge, so that
// "exactly 10 s after the delivery 5 back" happens often.
func TestGateMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		origin := time.Unix(1_700_000_000, 0) // wall clock only
		if rapid.Bool().Draw(t, "monotonic") {
			origin = time.Now() // carries a monotonic reading; Add keeps it
		}
		run := newGateRun(origin)
		n := rapid.IntRange(1, 200).Draw(t, "calls")
		for range n {
			d := stepGen.Draw(t, "step")
			if rapid.IntRange(0, 3).Draw(t, "to edge?") == 0 {
				d = run.toEdge(rapid.SampledFrom(edgeOffsets).Draw(t, "edge offset"))
			}
			r := reportGen.Draw(t, "report")
			if err := run.step(d, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := run.check(); err != nil {
			t.Fatal(err)
		}
	})
}
