package demo

import (
	"sync"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// recorder is the parent session as the relay sees it: a notifier that
// records what would be shown, and the real in-memory mailbox, wrapped to
// keep the order of every message the relay handed over.
type recorder struct {
	clock *simclock.Clock
	box   *mailbox.Memory

	mu       sync.Mutex
	notes    []Notification
	posted   []diag.ParentMessage // every Post call, stored or not
	log      []int                // Post i as i, Notify j as -1-j, in call order
	sinkErrs []string
}

func (s *recorder) Notify(n relay.Notification) error {
	at := sinceStart(s.clock.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, -1-len(s.notes))
	s.notes = append(s.notes, Notification{
		AtMS: at, Thread: n.Thread, Level: string(n.Level), Text: n.Text, Summary: n.Thread == "",
	})
	return nil
}

func (s *recorder) Post(m diag.ParentMessage) error {
	s.mu.Lock()
	s.log = append(s.log, len(s.posted))
	s.posted = append(s.posted, m)
	s.mu.Unlock()
	return s.box.Post(m)
}

func (s *recorder) sinkError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sinkErrs = append(s.sinkErrs, err.Error())
}

// fates works out, from the order of the calls, what became of each posted
// message's notification, and fills each summary's HeldBack. The relay
// posts a report's parent message, then offers its notification on the
// same goroutine (a summary of earlier held-back ones may come first), and
// the demo reports from one goroutine: so a report's notification follows
// its own Post before any other Post. A summary stands for every earlier
// message whose notification was not shown and that no earlier summary
// counted.
func (s *recorder) fates(notifies bool) (fate []string, notes []Notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fate = make([]string, len(s.posted))
	notes = append([]Notification{}, s.notes...)
	if !notifies {
		for i := range fate {
			fate[i] = NotificationNone
		}
		return fate, notes
	}
	last := -1
	for _, e := range s.log {
		if e >= 0 {
			last = e
		} else if n := notes[-1-e]; !n.Summary && last >= 0 && s.posted[last].From == n.Thread {
			fate[last] = NotificationShown
		}
	}
	seen := 0 // posts before the current log entry
	for _, e := range s.log {
		if e >= 0 {
			seen = e + 1
			continue
		}
		n := &notes[-1-e]
		if !n.Summary {
			continue
		}
		for i := range seen {
			if fate[i] == "" {
				fate[i] = NotificationHeldBack
				m := s.posted[i]
				n.HeldBack = append(n.HeldBack, Report{AtMS: sinceStart(m.At), Thread: m.From,
					Level: string(m.Level), Source: m.Source, Message: m.Message})
			}
		}
	}
	for i := range fate {
		if fate[i] == "" { // held back, and the run ended before its summary
			fate[i] = NotificationHeldBack
		}
	}
	return fate, notes
}

func (s *recorder) postedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.posted)
}

// postedSince returns the indexes and messages posted after the first n.
func (s *recorder) postedSince(n int) ([]int, []diag.ParentMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var idx []int
	for i := n; i < len(s.posted); i++ {
		idx = append(idx, i)
	}
	return idx, append([]diag.ParentMessage{}, s.posted[n:]...)
}

// postedFrom counts the messages the relay posted for reports from path.
func (s *recorder) postedFrom(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.posted {
		if m.From == path {
			n++
		}
	}
	return n
}
