package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// TestEdgeShown: on a cluster's home, watch names the edge of a thread's
// child (docs/cluster.md), sanitized like a source, in the plain printer,
// the state and the detail view.
func TestEdgeShown(t *testing.T) {
	var b strings.Builder
	p := &Printer{W: &b, Loc: time.UTC}
	ev := wire.Event{Kind: wire.EventDelivered, Thread: "/root/a", At: time.Unix(0, 0), Level: "warning",
		Message: wire.Ptr("m"), Edge: "sandbox-1\x1b[31m"}
	if err := p.Event(ev); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "(edge sandbox-1") || strings.Contains(got, "\x1b") {
		t.Errorf("printed %q", got)
	}
	s := NewState()
	s.Apply(ev)
	if th := s.Threads["/root/a"]; th == nil || !strings.HasPrefix(th.Edge, "sandbox-1") || strings.Contains(th.Edge, "\x1b") {
		t.Fatalf("state %+v", th)
	}
	b.Reset()
	if err := p.Threads([]wire.ThreadInfo{s.Threads["/root/a"].ThreadInfo}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " edge sandbox-1") {
		t.Errorf("thread line %q", b.String())
	}
}
