package relay_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// A runtime across its life: what Open refuses, what a reopen and a close
// keep and reset, and the manager's own start and close.

func TestOpenRejects(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	bad := []struct{ path, parent, owner, want string }{
		{"", "", "", "empty"},
		{"root/x", "", "", "must start with /"},
		{"/root//x", "", "", "segment 2"},
		{"/root/-x", "", "", "must start with a letter or digit"},
		{"/root/x y", "", "", "only [A-Za-z0-9_-]"},
		{"/root/" + strings.Repeat("a", 65), "", "", "at most 64"},
		{strings.Repeat("/a", 33), "", "", "at most 32"},
		{"/root", "", "", "no parent or owner"},
		{"/root/x", "/other", "", "not its lexical parent"},
		{"/k", "", "k", "owner"},
		{"/k", "", "/k", "cannot own itself"},
	}
	for _, b := range bad {
		_, err := r.m.Open(b.path, b.parent, b.owner)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Open(%q, %q, %q) = %v, want error containing %q", b.path, b.parent, b.owner, err, b.want)
		}
	}
	if _, err := r.m.Open(strings.Repeat("/a", 32), "", ""); err != nil {
		t.Errorf("32 segments: %v", err)
	}
}

func TestStatusKeepsNewest20AcrossReopen(t *testing.T) {
	r := newRig(t, relay.ModeRPC, func(c *relay.Config) { c.NotifyRate = 1000; c.NotifyBurst = 1000 })
	rt := r.open(t, "/root/x", "", "")
	for gen := range 3 {
		for i := range 10 {
			rt.Bus().Emit(diag.Topic, report("info", fmt.Sprintf("g%d m%d", gen, i), ""))
			r.clock.Advance(3 * time.Second) // slow enough for the window
		}
		next, err := rt.Reopen()
		if err != nil {
			t.Fatal(err)
		}
		rt = next
	}
	st := r.status(t, "/root/x")
	if len(st.Diagnostics) != 20 || st.Diagnostics[0].Message != "g1 m0" || st.Diagnostics[19].Message != "g2 m9" {
		t.Fatalf("diagnostics = %d, first %q, last %q", len(st.Diagnostics), st.Diagnostics[0].Message, st.Diagnostics[19].Message)
	}
	if st.Generation != 4 || !st.Open {
		t.Fatalf("generation %d open %v", st.Generation, st.Open)
	}
}

func TestReopenGivesFreshLimitsAndIgnoresTheOldBus(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	old := r.open(t, "/root/x", "", "")
	for i := range 25 {
		old.Bus().Emit(diag.Topic, report("info", fmt.Sprintf("m%d", i), ""))
		r.clock.Advance(10 * time.Second)
	}
	if st := r.status(t, "/root/x"); st.Dropped.Cap != 5 {
		t.Fatalf("cap drops = %d, want 5", st.Dropped.Cap)
	}
	fresh, err := old.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	old.Bus().Emit(diag.Topic, report("info", "late from the old generation", ""))
	if _, err := old.Report(report("info", "late, directly", "")); !errors.Is(err, relay.ErrClosed) {
		t.Fatalf("old.Report err = %v, want ErrClosed", err)
	}
	fresh.Bus().Emit(diag.Topic, report("info", "m0", "")) // a duplicate of gen 1, fine in gen 2
	in := r.inbox(t, "/root")
	if len(in) != 21 || in[20].Message != "m0" {
		t.Fatalf("inbox has %d, last %+v", len(in), in[len(in)-1])
	}
	if _, err := old.Reopen(); !errors.Is(err, relay.ErrClosed) {
		t.Fatalf("reopening a replaced generation: %v", err)
	}
	// Opening the open path again is a reopen too.
	third := r.open(t, "/root/x", "", "")
	if third.Generation() != 3 {
		t.Fatalf("generation %d", third.Generation())
	}
	fresh.Bus().Emit(diag.Topic, report("info", "from gen 2 after gen 3 opened", ""))
	r.wantInbox(t, "/root", 21, "a replaced generation delivered")
}

func TestClosedRuntimeCanBeReopened(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	rt.Close()
	rt.Close() // idempotent
	next, err := rt.Reopen()
	if err != nil || next.Generation() != 2 {
		t.Fatalf("reopen of a closed runtime: %v", err)
	}
	next.Bus().Emit(diag.Topic, report("info", "back again", ""))
	r.wantInbox(t, "/root", 1, "reopened after Close")
}

func TestShutdownHookReportsAreDelivered(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	// A "shutdown hook": the host runs it, then closes the runtime.
	rt.Bus().Emit(diag.Topic, report("info", "flushing cache on shutdown", "cache"))
	rt.Close()
	rt.Bus().Emit(diag.Topic, report("info", "after close", "cache"))
	in := r.inbox(t, "/root")
	if len(in) != 1 || in[0].Message != "flushing cache on shutdown" {
		t.Fatalf("inbox = %+v", in)
	}
	if st := r.status(t, "/root/x"); st.Open || len(st.Diagnostics) != 1 {
		t.Fatalf("status after close = %+v", st)
	}
}

func TestManagerClose(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	rt.Bus().Emit(diag.Topic, report("info", "before", ""))
	r.m.Close()
	rt.Bus().Emit(diag.Topic, report("info", "after", ""))
	if _, err := r.m.Open("/root/y", "", ""); !errors.Is(err, relay.ErrClosed) {
		t.Fatalf("Open after Close: %v", err)
	}
	if _, err := rt.Reopen(); !errors.Is(err, relay.ErrClosed) {
		t.Fatalf("Reopen after Close: %v", err)
	}
	if st := r.status(t, "/root/x"); len(st.Diagnostics) != 1 || st.Open {
		t.Fatalf("status = %+v", st)
	}
}

func TestNewManagerStartsEmpty(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	r.open(t, "/root/x", "", "").Bus().Emit(diag.Topic, report("info", "kept in the mailbox", ""))
	reloaded := relay.NewManager(relay.Config{Mailbox: r.box})
	defer reloaded.Close()
	if _, ok := reloaded.Status("/root/x"); ok {
		t.Fatal("status survived a manager reload")
	}
	r.wantInbox(t, "/root", 1, "after a manager reload")
}
