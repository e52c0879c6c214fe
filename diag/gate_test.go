package diag

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/sanitize"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func distinct(i int) Report { return Report{Info, fmt.Sprintf("report %d", i), "test"} }

// admit calls g.Admit and fails the test if the verdict is not want.
func admit(t *testing.T, g *Gate, r Report, now time.Time, want Verdict) {
	t.Helper()
	if got := g.Admit(r, now); got != want {
		t.Fatalf("Admit(%q, t0+%v) = %v, want %v", r.Message, now.Sub(t0), got, want)
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{
		Delivered: "delivered", DropDuplicate: "duplicate", DropRate: "rate",
		DropCap: "cap", DropInvalid: "invalid", 0: "Verdict(0)", 9: "Verdict(9)",
	} {
		if got := v.String(); got != want {
			t.Errorf("Verdict(%d).String() = %q, want %q", uint8(v), got, want)
		}
	}
}

func TestWindowEdge(t *testing.T) {
	for _, tc := range []struct {
		after time.Duration
		want  Verdict
	}{
		{Window - time.Millisecond, DropRate}, // 9.999 s
		{Window - time.Nanosecond, DropRate},
		{Window, Delivered}, // exactly 10 s: the first has left [t, t+10s)
		{Window + time.Nanosecond, Delivered},
	} {
		t.Run(tc.after.String(), func(t *testing.T) {
			g := NewGate()
			for i := range MaxPerWindow {
				admit(t, g, distinct(i), t0, Delivered)
			}
			admit(t, g, distinct(5), t0.Add(tc.after), tc.want)
		})
	}
}

func TestWindowSlides(t *testing.T) {
	g := NewGate()
	for i, s := range []float64{0, 1, 2, 3, 4} {
		admit(t, g, distinct(i), sec(s), Delivered)
	}
	admit(t, g, distinct(5), sec(9.999), DropRate)
	admit(t, g, distinct(5), sec(10), Delivered)    // the one at 0 left
	admit(t, g, distinct(6), sec(10.999), DropRate) // the one at 1 has not
	admit(t, g, distinct(6), sec(11), Delivered)
	admit(t, g, distinct(7), sec(11), DropRate)
	admit(t, g, distinct(7), sec(12), Delivered)
}

func TestDuplicateUsesNoSlot(t *testing.T) {
	g := NewGate()
	a := Report{Warning, "disk almost full", "fs"}
	admit(t, g, a, t0, Delivered)
	for range 100 {
		admit(t, g, a, t0, DropDuplicate)
	}
	for i := range MaxPerWindow - 1 {
		admit(t, g, distinct(i), t0, Delivered)
	}
	admit(t, g, distinct(9), t0, DropRate)
	if c := g.Counts(); c != (Counts{Delivered: 5, Dropped: Dropped{Duplicate: 100, Rate: 1}}) {
		t.Errorf("Counts() = %+v", c)
	}
}

func TestDuplicateKeyIsLevelSourceMessage(t *testing.T) {
	g := NewGate()
	admit(t, g, Report{Info, "m", "s"}, sec(0), Delivered)
	admit(t, g, Report{Warning, "m", "s"}, sec(0), Delivered)
	admit(t, g, Report{Info, "m", ""}, sec(0), Delivered)
	admit(t, g, Report{Info, "m", "t"}, sec(0), Delivered)
	admit(t, g, Report{Info, "n", "s"}, sec(0), Delivered)
	for _, r := range []Report{{Info, "m", "s"}, {Warning, "m", "s"}, {Info, "m", ""}} {
		admit(t, g, r, sec(100), DropDuplicate)
	}
	// A duplicate can not hide in a message+source split: "ab"+"" vs "a"+"b".
	admit(t, g, Report{Info, "mt", ""}, sec(100), Delivered)
}

// TestSameKeyDifferentText checks that reports sharing a filter key are told
// apart by their text: the key only skips comparisons.
func TestSameKeyDifferentText(t *testing.T) {
	a := Report{Info, "same head 1 same tail", "lint"}
	b := Report{Info, "same head 2 same tail", "lint"}
	c := Report{Info, "same head 2 same tail", "lent"}
	key := func(r Report) uint32 { return keyOf(r.Level.code(), r.Message, r.Source) }
	if key(a) != key(b) || key(b) != key(c) {
		t.Fatalf("keys %#x, %#x, %#x differ: the test needs reports that share a key", key(a), key(b), key(c))
	}
	g := NewGate()
	admit(t, g, a, t0, Delivered)
	admit(t, g, b, t0, Delivered)
	admit(t, g, c, t0, Delivered)
	admit(t, g, b, t0, DropDuplicate)
}

func TestRateDropIsNotRemembered(t *testing.T) {
	g := NewGate()
	for i := range MaxPerWindow {
		admit(t, g, distinct(i), t0, Delivered)
	}
	x := Report{Error, "retry later", "net"}
	admit(t, g, x, sec(5), DropRate)
	admit(t, g, x, sec(9), DropRate)
	admit(t, g, x, sec(10), Delivered)
	admit(t, g, x, sec(10), DropDuplicate)
}

func TestCap(t *testing.T) {
	g := NewGate()
	for i := range MaxPerGeneration {
		admit(t, g, distinct(i), sec(2*float64(i)), Delivered) // one per 2 s: never the window
	}
	admit(t, g, distinct(20), sec(1000), DropCap)
	admit(t, g, distinct(0), sec(1000), DropDuplicate) // duplicate is checked first
	admit(t, g, Report{"bad", "x", ""}, sec(1000), DropInvalid)
	want := Counts{Delivered: 20, Dropped: Dropped{Duplicate: 1, Cap: 1, Invalid: 1}}
	if c := g.Counts(); c != want {
		t.Errorf("Counts() = %+v, want %+v", c, want)
	}
}

func TestCapBeforeWindow(t *testing.T) {
	g := NewGate()
	for i := range MaxPerGeneration {
		admit(t, g, distinct(i), sec(2*float64(i)), Delivered)
	}
	// The last five are within 10 s of 38 s, so the window is full too; cap
	// is checked first.
	admit(t, g, distinct(99), sec(38), DropCap)
}

func TestInvalidWithoutParse(t *testing.T) {
	for _, r := range []Report{
		{},
		{"warn", "x", ""},
		{"INFO", "x", ""},
		{" info", "x", ""},
		{"info\x00", "x", ""},
		{Info, "", ""},
		{Info, " \t\n\u00a0\u3000", "s"},
		{Info, strings.Repeat("é", maxMessageBytes/2+1), ""},
		{Info, "x", strings.Repeat("s", maxSourceBytes+1)},
	} {
		g := NewGate()
		admit(t, g, r, t0, DropInvalid)
		if c := g.Counts(); c != (Counts{Dropped: Dropped{Invalid: 1}}) {
			t.Errorf("after %+v: Counts() = %+v", r, c)
		}
	}
	// The longest texts the sanitizer can produce are valid.
	admit(t, NewGate(), Report{Error, strings.Repeat("€", sanitize.MessageLimit), strings.Repeat("€", sanitize.SourceLimit)}, t0, Delivered)
}

func TestClockBackwardsFailsClosed(t *testing.T) {
	g := NewGate()
	for i, s := range []float64{0, 1, 2, 3, 4} {
		admit(t, g, distinct(i), sec(s), Delivered)
	}
	// Going back before the deliveries must not empty the window.
	admit(t, g, distinct(5), sec(-100), DropRate)
	admit(t, g, distinct(5), sec(3), DropRate)
	// Duplicates and invalid reports keep their reasons: those checks come
	// first and do not depend on time.
	admit(t, g, distinct(0), sec(-100), DropDuplicate)
	admit(t, g, Report{}, sec(-100), DropInvalid)
	// The clock stayed at 4 s: at 10 s the one at 0 s has left the window.
	admit(t, g, distinct(5), sec(10), Delivered)

	// Even with room in the window, a reading before the latest is dropped,
	// whatever decided the call that saw the latest reading.
	g = NewGate()
	admit(t, g, Report{Info, "", ""}, sec(50), DropInvalid)
	admit(t, g, distinct(0), sec(49.999), DropRate)
	admit(t, g, distinct(0), sec(50), Delivered) // an equal reading is not backwards
	admit(t, g, distinct(1), sec(50), Delivered)
	want := Counts{Delivered: 2, Dropped: Dropped{Rate: 1, Invalid: 1}}
	if c := g.Counts(); c != want {
		t.Errorf("Counts() = %+v, want %+v", c, want)
	}
}

func TestMonotonicReadings(t *testing.T) {
	start := time.Now() // carries a monotonic reading, as the relay's clock does
	g := NewGate()
	for i := range MaxPerWindow {
		admit(t, g, distinct(i), start, Delivered)
	}
	admit(t, g, distinct(5), start.Add(Window-time.Millisecond), DropRate)
	admit(t, g, distinct(5), start.Add(Window), Delivered)
	// A reading without a monotonic part, such as one decoded from JSON, is
	// compared by wall clock; being before the latest, it is dropped.
	admit(t, g, distinct(6), start.Round(0).Add(-time.Hour), DropRate)
}

func TestCountsAddUp(t *testing.T) {
	c := Counts{Delivered: 1, Dropped: Dropped{Duplicate: 2, Rate: 3, Cap: 4, Invalid: 5}}
	if c.Dropped.Total() != 14 || c.Total() != 15 {
		t.Errorf("Dropped.Total() = %d, Total() = %d; want 14, 15", c.Dropped.Total(), c.Total())
	}
}

// TestGateSize checks the fixed part of a Gate's memory: everything but the
// delivered reports' text, which the Gate shares with the Reports it was given.
func TestGateSize(t *testing.T) {
	size := reflect.TypeFor[Gate]().Size() // what unsafe.Sizeof says, without unsafe
	t.Logf("a Gate is %d bytes", size)
	if size > 1024 {
		t.Errorf("a Gate takes %d bytes, want at most 1 KiB", size)
	}
}
