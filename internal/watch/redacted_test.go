package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// watch shows the total of a thread's redacted secrets: from thread.list,
// thread.status and each delivered event.
func TestRedactedTotal(t *testing.T) {
	s := NewState()
	s.SetThreads([]wire.ThreadInfo{{Path: "/root/x", Parent: "/root", Redacted: wire.Redacted{"github-pat": 2}}})
	s.Apply(wire.Event{Kind: wire.EventDelivered, Thread: "/root/x", At: time.Now(), Level: "error",
		Source: wire.Ptr(""), Message: wire.Ptr("token [REDACTED:github-pat] [REDACTED:jwt]"),
		Redacted: wire.Redacted{"github-pat": 1, "jwt": 1}})
	if n := s.Threads["/root/x"].Redacted.Total(); n != 4 {
		t.Errorf("total %d, want 4", n)
	}
	s.SetStatus(wire.Status{Path: "/root/x", Parent: "/root", Redacted: wire.Redacted{"jwt": 7}})
	if n := s.Threads["/root/x"].Redacted.Total(); n != 7 {
		t.Errorf("after thread.status: total %d, want 7", n)
	}
	var out bytes.Buffer
	p := &Printer{W: &out}
	if err := p.Threads([]wire.ThreadInfo{{Path: "/root/x", Parent: "/root", Redacted: wire.Redacted{"a": 2, "b": 3, "c": -9}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " redacted 5") {
		t.Errorf("plain line %q lacks the total", out.String())
	}
}
