package main

// diagrelay demo: the whole relay on embedded defaults, in one process, on a
// simulated clock. The scenario is in demo_scenario.go, the text rendering
// in demo_print.go; this file has the command, the transcript it produces,
// the simulated clock and the recording sinks.

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

func init() {
	commands["demo"] = command{
		summary: "show what a parent session sees from well-behaved, noisy and hostile children",
		run:     runDemo,
	}
}

// runDemo: exit 0 after printing the transcript, 1 if the scenario or the
// output failed, 2 on a usage error.
func runDemo(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the transcript as one JSON document instead of text")
	mode := fs.String("mode", string(relay.ModeRPC), "the parent session's `mode`: tui, rpc or print")
	live := fs.Bool("watch", false, "run the session tree on the real clock through an embedded serve and watch it live (demo_watch.go)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: diagrelay demo [--json] [--mode tui|rpc|print]")
		fmt.Fprintln(stderr, "Runs a session tree with well-behaved, noisy and hostile child extensions")
		fmt.Fprintln(stderr, "on a simulated clock and prints what the parent session sees.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagrelay demo: unexpected argument %s\n", strconv.QuoteToASCII(fs.Arg(0)))
		fs.Usage()
		return 2
	}
	if *live {
		return runDemoWatch(stdin, stdout, stderr)
	}
	m, err := relay.ParseMode(*mode)
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo:", err)
		fs.Usage()
		return 2
	}

	tr, err := runScenario(m)
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo:", err)
		return 1
	}
	w := bufio.NewWriter(stdout)
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(tr)
	} else {
		printTranscript(w, tr)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo: writing the transcript:", err)
		return 1
	}
	return 0
}

// demoTranscript is everything the demo shows; `--json` prints it as one
// JSON document (indented, so it is also readable with a pager). Times are
// at_ms: milliseconds on the simulated clock since the session started.
// Every string in it is either the relay's sanitized output or ASCII text
// written by the demo; what a hostile extension sent appears only Go-quoted
// with non-ASCII escaped (strconv.QuoteToASCII), in events[].sent.
type demoTranscript struct {
	Mode   string     `json:"mode"`
	Limits demoLimits `json:"limits"`
	// Threads is the session tree: the parent session /root first, then
	// each child in the order it was opened.
	Threads []demoThread `json:"threads"`
	// Events is what happened, in time order: probes, reports sent (with
	// what the relay did with them), reopens and closes.
	Events []demoEvent `json:"events"`
	// Notifications are the UI notifications the parent's notifier got,
	// in order. None in print mode.
	Notifications []demoNotification `json:"notifications"`
	// Mailboxes are the unacknowledged parent messages per recipient, as
	// mailbox.Read returns them (oldest first).
	Mailboxes []demoMailbox `json:"mailboxes"`
	// StatusAtMS is when the statuses were read: before the manager closed.
	StatusAtMS int64        `json:"status_at_ms"`
	Statuses   []demoStatus `json:"statuses"`
	Totals     demoTotals   `json:"totals"`
}

type demoLimits struct {
	WindowReports   int     `json:"window_reports"`    // per runtime, per window
	WindowMS        int64   `json:"window_ms"`         //
	CapPerRuntime   int     `json:"cap_per_runtime"`   // per runtime generation
	StatusKeeps     int     `json:"status_keeps"`      // newest diagnostics per thread
	NotifyPerSecond float64 `json:"notify_per_second"` // host-wide
	NotifyBurst     int     `json:"notify_burst"`      // host-wide
}

type demoThread struct {
	Path      string `json:"path"`
	Parent    string `json:"parent,omitempty"` // lexical parent
	Owner     string `json:"owner,omitempty"`  // creator of an independent root
	ReportsTo string `json:"reports_to,omitempty"`
	Role      string `json:"role"`
}

type demoEvent struct {
	AtMS   int64  `json:"at_ms"`
	Thread string `json:"thread"` // a thread path, or "top-level" for an unhosted session
	What   string `json:"what"`
	// Sent is the payload as the extension sent it, Go-quoted with every
	// non-ASCII and control character escaped, long strings cut.
	Sent   string     `json:"sent,omitempty"`
	Result string     `json:"result"`
	Tally  *demoTally `json:"tally,omitempty"` // for events that sent reports
}

// demoTally counts what the relay did with the reports of one event:
// delivered, or dropped for one of the four reasons.
type demoTally struct {
	Delivered int `json:"delivered"`
	Duplicate int `json:"duplicate"`
	Rate      int `json:"rate"`
	Cap       int `json:"cap"`
	Invalid   int `json:"invalid"`
}

type demoNotification struct {
	AtMS   int64  `json:"at_ms"`
	Thread string `json:"thread"` // "" for the host-wide summary
	Level  string `json:"level"`  // also pi's notifyType
	Text   string `json:"text"`
	// Summary marks the host-wide limit's "N were not shown" notification.
	Summary bool `json:"summary"`
}

type demoMailbox struct {
	Recipient string        `json:"recipient"`
	Messages  []demoMessage `json:"messages"`
}

type demoMessage struct {
	ID      uint64 `json:"id"`
	From    string `json:"from"`
	Text    string `json:"text"` // exactly what the parent model would read
	Level   string `json:"level"`
	Source  string `json:"source"`
	Message string `json:"message"`
	AtMS    int64  `json:"at_ms"`
}

type demoStatus struct {
	Path       string `json:"path"`
	Parent     string `json:"parent"`
	Owner      string `json:"owner"`
	Open       bool   `json:"open"`
	Generation uint64 `json:"generation"`
	// Delivered counts every report delivered over all generations;
	// Diagnostics keeps only the newest relay.MaxStatusDiagnostics.
	Delivered   int              `json:"delivered"`
	Diagnostics []demoDiagnostic `json:"diagnostics"`
	Dropped     relay.Dropped    `json:"dropped"`
}

type demoDiagnostic struct {
	Level   string `json:"level"`
	Source  string `json:"source"`
	Message string `json:"message"`
	AtMS    int64  `json:"at_ms"`
}

type demoTotals struct {
	ChildThreads int `json:"child_threads"`
	Delivered    int `json:"delivered"`
	Messages     int `json:"messages"` // parent messages in the mailbox
	// Notifications shown for reports, summaries shown, and how many report
	// notifications the summaries said were not shown.
	NotificationsShown int           `json:"notifications_shown"`
	Summaries          int           `json:"summaries"`
	NotShown           int           `json:"not_shown"`
	Dropped            relay.Dropped `json:"dropped"`
	SinkErrors         []string      `json:"sink_errors"`
}

// demoStart is the simulated clock's origin. Only offsets from it are shown,
// so its value does not matter; a fixed one keeps the mailbox's stored
// times, and so every run, identical.
var demoStart = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

func sinceStart(t time.Time) int64 { return t.Sub(demoStart).Milliseconds() }

// simClock is a monotonic clock that moves only when told to, with timers
// that run when the clock passes them: the relay's Config.Now and
// Config.AfterFunc for a run that is deterministic and instant.
type simClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int // orders timers set for the same instant
	timers []*simTimer
}

type simTimer struct {
	at  time.Time
	seq int
	f   func()
}

func newSimClock(start time.Time) *simClock { return &simClock{now: start} }

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock reaches now+d; the returned
// func cancels it and reports whether it was still pending.
func (c *simClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &simTimer{at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.timers, t)
		if i < 0 {
			return false
		}
		c.timers = slices.Delete(c.timers, i, i+1)
		return true
	}
}

// AdvanceTo moves the clock forward to t. Each timer due on the way runs at
// its own instant, earliest first, with no lock held (it may set another
// timer, which runs too if it falls due before t). The clock never goes
// back: a t in the past only runs the timers already due.
func (c *simClock) AdvanceTo(t time.Time) {
	for {
		c.mu.Lock()
		i := c.nextLocked()
		if i < 0 || c.timers[i].at.After(t) {
			if t.After(c.now) {
				c.now = t
			}
			c.mu.Unlock()
			return
		}
		next := c.timers[i]
		c.timers = slices.Delete(c.timers, i, i+1)
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

func (c *simClock) nextLocked() int {
	best := -1
	for i, t := range c.timers {
		if best < 0 || t.at.Before(c.timers[best].at) ||
			t.at.Equal(c.timers[best].at) && t.seq < c.timers[best].seq {
			best = i
		}
	}
	return best
}

// demoSinks is the parent session as the relay sees it: a notifier that
// records what would be shown, and the real in-memory mailbox, wrapped to
// keep the order of every message the relay handed over.
type demoSinks struct {
	clock *simClock
	box   *mailbox.Memory

	mu       sync.Mutex
	notes    []demoNotification
	posted   []relay.ParentMessage // every Post call, stored or not
	sinkErrs []string
}

func (s *demoSinks) Notify(n relay.Notification) error {
	at := sinceStart(s.clock.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, demoNotification{
		AtMS: at, Thread: n.Thread, Level: string(n.Level), Text: n.Text, Summary: n.Thread == "",
	})
	return nil
}

func (s *demoSinks) Post(m relay.ParentMessage) error {
	s.mu.Lock()
	s.posted = append(s.posted, m)
	s.mu.Unlock()
	return s.box.Post(m)
}

func (s *demoSinks) sinkError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sinkErrs = append(s.sinkErrs, err.Error())
}

// postedFrom counts the messages the relay posted for reports from path.
func (s *demoSinks) postedFrom(path string) int {
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

func (s *demoSinks) postedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.posted)
}

// postedSince returns the messages posted after the first n.
func (s *demoSinks) postedSince(n int) []relay.ParentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.posted[n:])
}
