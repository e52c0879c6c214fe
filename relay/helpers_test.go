package relay_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// newClock is the tests' clock: it moves only on Advance. Its own timers
// are not used; scheduler fires the Manager's when a test says.
func newClock() *simclock.Clock { return simclock.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) }

// scheduler is a manual AfterFunc: timers fire when the test says.
type scheduler struct {
	mu     sync.Mutex
	timers []*timer
}

type timer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (s *scheduler) AfterFunc(d time.Duration, f func()) func() bool {
	t := &timer{d: d, f: f}
	s.mu.Lock()
	s.timers = append(s.timers, t)
	s.mu.Unlock()
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// fire runs the pending timers and returns their delays.
func (s *scheduler) fire() []time.Duration {
	s.mu.Lock()
	ts := s.timers
	s.timers = nil
	s.mu.Unlock()
	var ds []time.Duration
	for _, t := range ts {
		if !t.stopped {
			ds = append(ds, t.d)
			t.f()
		}
	}
	return ds
}

func (s *scheduler) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// notifier records what the parent's UI would show.
type notifier struct {
	mu    sync.Mutex
	shown []relay.Notification
	fail  error
	panic bool
}

func (n *notifier) Notify(x relay.Notification) error {
	if n.panic {
		panic("notifier exploded")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail != nil {
		return n.fail
	}
	n.shown = append(n.shown, x)
	return nil
}

func (n *notifier) all() []relay.Notification {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]relay.Notification(nil), n.shown...)
}

// failingMailbox fails or panics on Post, to test sink isolation.
type failingMailbox struct{ panic bool }

func (f failingMailbox) Post(diag.ParentMessage) error {
	if f.panic {
		panic("mailbox exploded")
	}
	return errors.New("disk full")
}

// rig is a manager wired to the real in-memory mailbox, a recording
// notifier, a manual clock and a manual scheduler.
type rig struct {
	m     *relay.Manager
	box   *mailbox.Memory
	ui    *notifier
	clock *simclock.Clock
	sched *scheduler

	mu     sync.Mutex
	panics []string // "thread topic: value" of each handler panic
}

func newRig(t testing.TB, mode relay.Mode, tweak ...func(*relay.Config)) *rig {
	r := &rig{box: mailbox.NewMemory(), ui: &notifier{}, clock: newClock(), sched: &scheduler{}}
	cfg := relay.Config{
		Mode:      mode,
		Notifier:  r.ui,
		Mailbox:   r.box,
		Now:       r.clock.Now,
		AfterFunc: r.sched.AfterFunc,
		OnPanic: func(thread, topic string, v any) {
			r.mu.Lock()
			r.panics = append(r.panics, fmt.Sprintf("%s %s: %v", thread, topic, v))
			r.mu.Unlock()
		},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	r.m = relay.NewManager(cfg)
	t.Cleanup(r.m.Close)
	return r
}

func (r *rig) open(t testing.TB, path, parent, owner string) *relay.Runtime {
	t.Helper()
	rt, err := r.m.Open(path, parent, owner)
	if err != nil {
		t.Fatalf("Open(%q, %q, %q): %v", path, parent, owner, err)
	}
	return rt
}

// inbox returns the recipient's unacknowledged messages (up to 1000).
func (r *rig) inbox(t testing.TB, recipient string) []mailbox.Entry {
	t.Helper()
	es, err := r.box.Read(recipient, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// wantInbox fails the test unless recipient's mailbox holds want
// messages; why names the case.
func (r *rig) wantInbox(t testing.TB, recipient string, want int, why string) {
	t.Helper()
	if n := len(r.inbox(t, recipient)); n != want {
		t.Fatalf("%s: %s's mailbox holds %d, want %d", why, recipient, n, want)
	}
}

// drain reads and acknowledges every message for recipient, past the
// per-read limit.
func (r *rig) drain(t testing.TB, recipient string) []mailbox.Entry {
	t.Helper()
	var all []mailbox.Entry
	for {
		es := r.inbox(t, recipient)
		if len(es) == 0 {
			return all
		}
		ids := make([]uint64, len(es))
		for i, e := range es {
			ids[i] = e.ID
		}
		if n, err := r.box.Ack(recipient, ids); err != nil || n != len(ids) {
			t.Fatalf("ack: %d, %v", n, err)
		}
		all = append(all, es...)
	}
}

func (r *rig) status(t testing.TB, path string) relay.Status {
	t.Helper()
	st, ok := r.m.Status(path)
	if !ok {
		t.Fatalf("no status for %s", path)
	}
	return st
}

func report(level, message, source string) map[string]any {
	m := map[string]any{"level": level, "message": message}
	if source != "" {
		m["source"] = source
	}
	return m
}
