package relay_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// 100 children report 1000 times each, all at once: each child gets exactly
// what the per-runtime limits allow and nothing of another child's. Run with
// -race.
func TestManyChildrenConcurrently(t *testing.T) {
	children, reports := 100, 1000
	if testing.Short() {
		children, reports = 20, 200
	}
	r := newRig(t, relay.ModeRPC)
	rts := make([]*relay.Runtime, children)
	for i := range rts {
		rts[i] = r.open(t, fmt.Sprintf("/root/c%03d", i), "", "")
	}
	// Five phases of reports/5 each, the clock moving 10 s between phases:
	// each child gets exactly 5 per phase until the cap of 20 ends phase 5.
	const phases = 5
	for p := range phases {
		var wg sync.WaitGroup
		for i, rt := range rts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range reports / phases {
					j := p*reports/phases + k
					// A mix of duplicates, distinct text and junk.
					switch j % 4 {
					case 0:
						rt.Bus().Emit(diag.Topic, report("info", fmt.Sprintf("c%03d same", i), ""))
					case 3:
						rt.Bus().Emit(diag.Topic, j)
					default:
						rt.Bus().Emit(diag.Topic, report("warning", fmt.Sprintf("c%03d n%d", i, j), "ext"))
					}
				}
			}()
		}
		wg.Wait()
		r.clock.Advance(10 * time.Second)
	}

	in := r.drain(t, "/root")
	perChild := map[string]int{}
	for _, e := range in {
		if !strings.HasPrefix(e.Message, e.From[len("/root/"):]+" ") {
			t.Fatalf("%s delivered %q", e.From, e.Message)
		}
		perChild[e.From]++
	}
	total := 0
	for _, rt := range rts {
		st := r.status(t, rt.Path())
		n := perChild[rt.Path()]
		total += n
		if n != diag.MaxPerGeneration || n != len(st.Diagnostics) {
			t.Fatalf("%s: %d delivered, status has %d, want exactly %d", rt.Path(), n, len(st.Diagnostics), diag.MaxPerGeneration)
		}
		d := st.Dropped
		if uint64(n)+d.Total() != uint64(reports) {
			t.Fatalf("%s: %d delivered + %+v dropped != %d", rt.Path(), n, d, reports)
		}
		if d.Invalid != uint64(reports/4) || d.Cap == 0 || d.Duplicate == 0 || d.Rate == 0 {
			t.Fatalf("%s: dropped %+v", rt.Path(), d)
		}
		// The window: at most 5 in any [t, t+10s).
		ds := st.Diagnostics
		for a := range ds {
			k := 0
			for b := a; b < len(ds) && ds[b].At.Sub(ds[a].At) < 10*time.Second; b++ {
				k++
			}
			if k > diag.MaxPerWindow {
				t.Fatalf("%s: %d delivered within 10 s of %v", rt.Path(), k, ds[a].At)
			}
		}
	}
	if total != len(in) {
		t.Fatalf("inbox %d, per-child total %d", len(in), total)
	}
}

// Reports racing on one runtime, on the wall clock, are never taken for a
// clock going backwards: 4 distinct reports at once are all delivered.
func TestConcurrentReportsOnOneRuntime(t *testing.T) {
	for iter := range 200 {
		m := relay.NewManager(relay.Config{Mailbox: mailbox.NewMemory()})
		rt, _ := m.Open("/root/x", "", "")
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rt.Bus().Emit(diag.Topic, report("info", fmt.Sprint("report ", i), ""))
			}()
		}
		wg.Wait()
		st, _ := m.Status("/root/x")
		if len(st.Diagnostics) != 4 || st.Dropped != (diag.Dropped{}) {
			t.Fatalf("iteration %d: %d delivered, dropped %+v", iter, len(st.Diagnostics), st.Dropped)
		}
		m.Close()
	}
}

// Reopening an independent root with another owner while it reports: each
// generation's reports go to the owner it was opened with (run with -race).
func TestReopenWithNewOwnerWhileReporting(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/k", "", "/root/a")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			rt.Report(report("info", fmt.Sprint("from gen 1 #", i), ""))
		}
	}()
	rt2 := r.open(t, "/k", "", "/root/b")
	wg.Wait()
	rt2.Bus().Emit(diag.Topic, report("info", "from gen 2", ""))
	for _, e := range r.inbox(t, "/root/a") {
		if !strings.HasPrefix(e.Message, "from gen 1") {
			t.Fatalf("/root/a got %q", e.Message)
		}
	}
	if in := r.inbox(t, "/root/b"); len(in) != 1 || in[0].Message != "from gen 2" {
		t.Fatalf("/root/b got %+v", in)
	}
}
