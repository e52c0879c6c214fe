package simclock_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/simclock"
)

func TestClock(t *testing.T) {
	start := time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)
	c := simclock.New(start)
	since := func() int64 { return c.Now().Sub(start).Milliseconds() }
	var got []string
	rec := func(name string) func() {
		return func() { got = append(got, fmt.Sprintf("%s@%d", name, since())) }
	}
	c.AfterFunc(2*time.Second, rec("b"))
	c.AfterFunc(time.Second, func() {
		rec("a")()
		c.AfterFunc(500*time.Millisecond, rec("a2")) // due before b
	})
	stop := c.AfterFunc(time.Second, rec("stopped"))
	c.AfterFunc(time.Second, rec("a-same-instant"))
	if !stop() || stop() {
		t.Error("stop: want true, then false")
	}
	if p := c.Pending(); !slices.Equal(p, []time.Duration{time.Second, time.Second, 2 * time.Second}) {
		t.Errorf("Pending() = %v", p)
	}
	c.AdvanceTo(start.Add(1800 * time.Millisecond))
	if since() != 1800 {
		t.Errorf("now %d ms, want 1800", since())
	}
	c.AdvanceTo(start) // never backwards
	if since() != 1800 {
		t.Errorf("went back to %d ms", since())
	}
	c.Advance(3200 * time.Millisecond)
	want := "a@1000 a-same-instant@1000 a2@1500 b@2000"
	if s := strings.Join(got, " "); s != want || since() != 5000 {
		t.Errorf("timers ran %q at %d ms, want %q at 5000", s, since(), want)
	}
}
