package relay_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/threadpath"
)

type notes struct {
	mu sync.Mutex
	ns []relay.Notification
}

func (n *notes) Notify(x relay.Notification) error {
	n.mu.Lock()
	n.ns = append(n.ns, x)
	n.mu.Unlock()
	return nil
}

// TestDeliverRemote: an edge's report is stored once per id, shown once,
// parsed again at the home (an edge cannot deliver what a child could not),
// and its thread gets a status even when the home never opened it.
func TestDeliverRemote(t *testing.T) {
	st, err := mailbox.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := &notes{}
	m := relay.NewManager(relay.Config{Mailbox: st, Notifier: n})
	defer m.Close()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := relay.RemoteReport{ID: "e1 x.1", Seq: 3, Path: "/root/a", Parent: "/root", Edge: "e1",
		Level: "error", Source: "lint", Message: "boom \x1b[31mred", At: at}
	for i := range 3 {
		dup, err := m.DeliverRemote(r)
		if err != nil || dup != (i > 0) {
			t.Fatalf("delivery %d: dup %v, %v", i, dup, err)
		}
	}
	s, ok := m.Status("/root/a")
	if !ok || s.Open || len(s.Diagnostics) != 1 || s.Edge != "e1" || s.Diagnostics[0].Message != "boom red" {
		t.Fatalf("status %+v", s)
	}
	es, _ := st.Read("/root", 10)
	if len(es) != 1 || es[0].From != "/root/a" || es[0].At != at {
		t.Fatalf("mailbox %+v", es)
	}
	eventuallyNotes(t, n, 1)

	bad := r
	bad.ID, bad.Message = "e1 x.2", "\x1b[0m \u200b"
	if _, err := m.DeliverRemote(bad); !errors.Is(err, diag.ErrInvalid) {
		t.Errorf("a blank message from an edge: %v, want diag.ErrInvalid", err)
	}
	bad.Message, bad.Parent = "ok", "/elsewhere"
	bad.Path = "/root/b"
	if _, err := m.DeliverRemote(bad); !errors.Is(err, threadpath.ErrInvalid) {
		t.Errorf("a parent that is not the lexical one: %v", err)
	}

	m.SetRemoteCounts("/root/a", "e1", "boot1", relay.RemoteCounts{Dropped: diag.Dropped{Rate: 2}, Redacted: diag.Redacted{"github-pat": 1}})
	m.SetRemoteCounts("/root/a", "e1", "boot1", relay.RemoteCounts{Dropped: diag.Dropped{Rate: 3}})
	m.SetRemoteCounts("/root/a", "e1", "boot2", relay.RemoteCounts{Dropped: diag.Dropped{Cap: 1}})
	s, _ = m.Status("/root/a")
	if s.Dropped != (diag.Dropped{Rate: 3, Cap: 1}) || len(s.Redacted) != 0 {
		t.Errorf("counts: dropped %+v, redacted %v; want the newest total per boot, summed", s.Dropped, s.Redacted)
	}

	mem := relay.NewManager(relay.Config{Mailbox: mailbox.NewMemory()})
	defer mem.Close()
	if _, err := mem.DeliverRemote(r); !errors.Is(err, relay.ErrNotOnce) {
		t.Errorf("a mailbox that cannot store once: %v", err)
	}
}

func eventuallyNotes(t *testing.T, n *notes, want int) {
	t.Helper()
	testutil.Eventually(t, 2*time.Second, fmt.Sprintf("%d notifications", want), func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return len(n.ns) == want
	})
}

// TestDeliverRemoteBesideOpen: a remote report for a root thread reads the
// owner that a concurrent Open (a reopen by the host) writes; under -race
// this failed while DeliverRemote read it unlocked.
func TestDeliverRemoteBesideOpen(t *testing.T) {
	st, err := mailbox.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := relay.NewManager(relay.Config{Mailbox: st})
	defer m.Close()
	if _, err := m.Open("/k", "", "/root"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if _, err := m.Open("/k", "", "/root"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 20 {
		r := relay.RemoteReport{ID: "e1 x." + string(rune('a'+i)), Seq: uint64(i + 1), Path: "/k", Owner: "/root", Edge: "e1",
			Level: "error", Message: "m " + string(rune('a'+i)), At: time.Now()}
		if _, err := m.DeliverRemote(r); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	msgs, err := st.Read("/root", 100)
	if err != nil || len(msgs) != 20 {
		t.Fatalf("/root's mailbox: %d messages, %v", len(msgs), err)
	}
}
