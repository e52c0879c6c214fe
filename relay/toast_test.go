package relay_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// Twelve children report at once: the default limit (burst 10) shows ten,
// holds two, and shows one summary when the limit allows again. Every
// report still reaches the mailbox and its status.
func TestHostWideToastLimit(t *testing.T) {
	r := newRig(t, relay.ModeTUI)
	for i := range 12 {
		rt := r.open(t, fmt.Sprintf("/root/c%d", i), "", "")
		level := "info"
		if i == 11 {
			level = "error"
		}
		rt.Bus().Emit(diag.Topic, report(level, "starting", ""))
	}
	if n := len(r.ui.all()); n != 10 {
		t.Fatalf("shown %d, want 10", n)
	}
	r.wantInbox(t, "/root", 12, "toasts limited, reports not")
	if len(r.status(t, "/root/c11").Diagnostics) != 1 {
		t.Fatal("held-back report missing from status")
	}
	if r.sched.pending() != 1 {
		t.Fatalf("%d timers pending, want exactly 1", r.sched.pending())
	}

	r.clock.Advance(999 * time.Millisecond)
	if ds := r.sched.fire(); len(ds) != 1 || ds[0] != time.Second {
		t.Fatalf("timer delays %v, want [1s]", ds)
	}
	// Fired early (999 ms): no token yet, so it waits again.
	if n := len(r.ui.all()); n != 10 || r.sched.pending() != 1 {
		t.Fatalf("early fire: shown %d, pending %d", n, r.sched.pending())
	}
	r.clock.Advance(time.Millisecond)
	r.sched.fire()
	shown := r.ui.all()
	if len(shown) != 11 {
		t.Fatalf("shown %d, want 11", len(shown))
	}
	sum := shown[10]
	if sum.Thread != "" || sum.Level != diag.Error || !strings.HasPrefix(sum.Text, "2 diagnostic notifications were not shown") {
		t.Fatalf("summary = %+v", sum)
	}
	if r.sched.pending() != 0 {
		t.Fatal("timer left pending after the summary")
	}
}

// A report that arrives once a token is free is shown, preceded by the
// summary of what was held back; the summary takes no token of its own.
func TestSummaryGoesBeforeTheNextNotification(t *testing.T) {
	r := newRig(t, relay.ModeRPC, func(c *relay.Config) { c.NotifyBurst = 1 })
	a := r.open(t, "/root/a", "", "")
	a.Bus().Emit(diag.Topic, report("info", "one", ""))
	a.Bus().Emit(diag.Topic, report("warning", "two", "")) // held
	r.clock.Advance(time.Second)
	a.Bus().Emit(diag.Topic, report("info", "three", ""))
	shown := r.ui.all()
	if len(shown) != 3 || !strings.HasPrefix(shown[1].Text, "1 diagnostic notification was not shown") ||
		shown[1].Level != diag.Warning || shown[2].Text != "/root/a: three" {
		t.Fatalf("shown = %+v", shown)
	}
	r.sched.fire() // the timer set for "two" finds nothing left to say
	if n := len(r.ui.all()); n != 3 {
		t.Fatalf("timer added a summary: %d shown", n)
	}
	r.wantInbox(t, "/root", 3, "after the timer")
}

// A steady flood from many children shows one real notification per token,
// each after the count of those held back: never summaries alone.
func TestSteadyFloodShowsRealNotifications(t *testing.T) {
	r := newRig(t, relay.ModeRPC, func(c *relay.Config) { c.NotifyBurst = 1 })
	var rts []*relay.Runtime
	for i := range 40 {
		rts = append(rts, r.open(t, fmt.Sprintf("/root/c%d", i), "", ""))
	}
	for i, rt := range rts { // one report every 250 ms, for 10 s
		rt.Bus().Emit(diag.Topic, report("info", fmt.Sprintf("report %d", i), ""))
		r.clock.Advance(250 * time.Millisecond)
	}
	real, summaries := 0, 0
	prevSummary := false
	for _, n := range r.ui.all() {
		if n.Thread == "" {
			if prevSummary {
				t.Fatal("two summaries in a row")
			}
			summaries++
			prevSummary = true
			continue
		}
		real++
		prevSummary = false
	}
	if real != 10 || summaries != 9 {
		t.Fatalf("%d real notifications and %d summaries, want 10 and 9", real, summaries)
	}
}

func TestCloseCancelsThePendingSummary(t *testing.T) {
	r := newRig(t, relay.ModeRPC, func(c *relay.Config) { c.NotifyBurst = 1 })
	a := r.open(t, "/root/a", "", "")
	a.Bus().Emit(diag.Topic, report("info", "one", ""))
	a.Bus().Emit(diag.Topic, report("info", "two", ""))
	if r.sched.pending() != 1 {
		t.Fatal("no timer")
	}
	r.m.Close()
	if r.sched.pending() != 0 {
		t.Fatal("Close left the timer")
	}
}
