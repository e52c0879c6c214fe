package relay_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu  sync.Mutex
	obs []relay.Observation
}

func (r *recorder) Observe(o relay.Observation) {
	r.mu.Lock()
	r.obs = append(r.obs, o)
	r.mu.Unlock()
}

func (r *recorder) kinds() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, o := range r.obs {
		fmt.Fprintf(&b, "%d:%s ", o.Kind, o.Thread)
	}
	return b.String()
}

func TestObserverSeesDeliveryDropHeldAndSummary(t *testing.T) {
	rec := &recorder{}
	r := newRig(t, relay.ModeRPC, func(c *relay.Config) {
		c.Observer, c.NotifyRate, c.NotifyBurst = rec, 1, 1
	})
	a := r.open(t, "/root/a", "", "")
	b := r.open(t, "/k", "", "")
	a.Report(report("warning", "one", ""))
	a.Report(report("warning", "one", ""))      // duplicate
	b.Report(report("error", "\x1b[2Jtwo", "")) // held by the limit
	r.sched.fire()
	r.clock.Advance(2e9)
	r.sched.fire() // the summary

	const (
		del  = relay.ObservedDelivery
		drop = relay.ObservedDrop
		held = relay.ObservedHeld
		note = relay.ObservedNotification
	)
	want := fmt.Sprintf("%d:/root/a %d:/root/a %d:/root/a %d:/k %d:/k %d: ", del, note, drop, del, held, note)
	if got := rec.kinds(); got != want {
		t.Fatalf("observed %q, want %q", got, want)
	}
	o := rec.obs
	if o[2].Verdict != diag.DropDuplicate || o[3].Report.Message != "two" || o[4].Notification.Text != "/k: two" {
		t.Fatalf("observations = %+v", o)
	}
	if !strings.Contains(o[5].Notification.Text, "1 diagnostic notification was not shown") || o[5].Notification.Level != diag.Error {
		t.Fatalf("summary = %+v", o[5])
	}
	if len(r.ui.all()) != 2 {
		t.Fatalf("notifications = %+v", r.ui.all())
	}

	a.Close()
	ts := r.m.Threads()
	if len(ts) != 2 || ts[0].Path != "/k" || ts[0].Owner != "/root" || !ts[0].Open || ts[0].Diagnostics != 1 ||
		ts[1].Path != "/root/a" || ts[1].Open || ts[1].Dropped.Duplicate != 1 || ts[1].Generation != 1 {
		t.Fatalf("Threads = %+v", ts)
	}
	if _, ok := r.m.Thread("/nope"); ok {
		t.Fatal("Thread of a path never opened")
	}
}

// Thread's summary counts the live generation's drops, as Status does:
// thread.list and thread.status must agree.
func TestThreadSummaryCountsLiveDrops(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	for range 2 {
		rt.Report(report("info", "same", ""))
	}
	check := func(when string) {
		sum, ok := r.m.Thread("/root/x")
		st := r.status(t, "/root/x")
		if !ok || sum.Dropped != st.Dropped || sum.Dropped.Duplicate != 1 {
			t.Errorf("%s: summary dropped %+v, status %+v; want one duplicate in both", when, sum.Dropped, st.Dropped)
		}
	}
	check("live")
	rt.Close()
	check("closed")
}
