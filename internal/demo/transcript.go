// Package demo is diagrelay's demo: the whole relay on embedded defaults,
// in one process, on a simulated clock. Run plays the scenario (a session
// tree whose children's extensions behave well, flood or attack) and
// returns the Transcript of what the parent session saw; Render prints it
// for a person, and the Transcript's JSON is the machine-readable form.
package demo

import (
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// Transcript is everything the demo shows. Its JSON form (diagrelay demo
// --json) carries data only: no text cut or worded for the screen. Times
// are at_ms: milliseconds on the simulated clock since the session started.
// Every string in it is either the relay's sanitized output or ASCII text
// written by the demo; what a hostile extension sent appears only Go-quoted
// with non-ASCII escaped (strconv.QuoteToASCII), in events[].sent.
type Transcript struct {
	Mode   string `json:"mode"`
	Limits Limits `json:"limits"`
	// Threads is the session tree: the parent session /root first, then
	// each child in the order it was opened.
	Threads []Thread `json:"threads"`
	// Events is what happened, in time order: probes, reports sent (with
	// what the relay did with them), reopens and closes.
	Events []Event `json:"events"`
	// Notifications are the UI notifications the parent's notifier got,
	// in order. None in print mode.
	Notifications []Notification `json:"notifications"`
	// Mailboxes are the unacknowledged parent messages per recipient, as
	// mailbox.Read returns them (oldest first).
	Mailboxes []Mailbox `json:"mailboxes"`
	// StatusAtMS is when the statuses were read: before the manager closed.
	StatusAtMS int64    `json:"status_at_ms"`
	Statuses   []Status `json:"statuses"`
	Totals     Totals   `json:"totals"`
}

// Limits are the relay's embedded defaults the scenario runs under.
type Limits struct {
	WindowReports   int     `json:"window_reports"`    // per runtime, per window
	WindowMS        int64   `json:"window_ms"`         //
	CapPerRuntime   int     `json:"cap_per_runtime"`   // per runtime generation
	StatusKeeps     int     `json:"status_keeps"`      // newest diagnostics per thread
	NotifyPerSecond float64 `json:"notify_per_second"` // host-wide
	NotifyBurst     int     `json:"notify_burst"`      // host-wide
}

// Thread is one node of the session tree.
type Thread struct {
	Path      string `json:"path"`
	Parent    string `json:"parent,omitempty"` // lexical parent
	Owner     string `json:"owner,omitempty"`  // creator of an independent root
	ReportsTo string `json:"reports_to,omitempty"`
	Role      string `json:"role"`
}

// Event is one step of the scenario.
type Event struct {
	AtMS   int64  `json:"at_ms"`
	Thread string `json:"thread"` // a thread path, or "top-level" for an unhosted session
	What   string `json:"what"`
	// Sent is the payload as the extension sent it, Go-quoted with every
	// non-ASCII and control character escaped, long strings cut (saying
	// how many characters were cut).
	Sent string `json:"sent,omitempty"`
	// Result says what became of the step, without the delivered text,
	// which is in Delivered.
	Result string `json:"result"`
	// Delivered is the report as the relay delivered it (sanitized), for a
	// step that sent one report and had it delivered.
	Delivered *Diagnostic `json:"delivered,omitempty"`
	Tally     *Tally      `json:"tally,omitempty"` // for events that sent reports
}

// Tally counts what the relay did with the reports of one event:
// delivered, or dropped for one of the four reasons; and of the delivered
// ones, how many notifications the host-wide limit held back.
type Tally struct {
	Delivered    int `json:"delivered"`
	diag.Dropped     // duplicate, rate, cap, invalid, as members of the tally
	HeldBack     int `json:"held_back"`
}

// Notification is one UI notification the parent's notifier got.
type Notification struct {
	AtMS   int64  `json:"at_ms"`
	Thread string `json:"thread"` // "" for the host-wide summary
	Level  string `json:"level"`  // also pi's notifyType
	Text   string `json:"text"`
	// Summary marks the host-wide limit's "N were not shown" notification.
	// Its level is the most severe of the held-back reports', listed in
	// HeldBack, so that a held-back error is not announced as info.
	Summary  bool     `json:"summary"`
	HeldBack []Report `json:"held_back,omitempty"`
}

// Report names one delivered report: its thread, time and sanitized text.
type Report struct {
	AtMS    int64  `json:"at_ms"`
	Thread  string `json:"thread"`
	Level   string `json:"level"`
	Source  string `json:"source"`
	Message string `json:"message"`
}

// Mailbox is one recipient's unacknowledged parent messages.
type Mailbox struct {
	Recipient string    `json:"recipient"`
	Messages  []Message `json:"messages"`
}

// The fates of a parent message's notification.
const (
	NotificationShown    = "shown"
	NotificationHeldBack = "held_back" // by the host-wide limit; counted in a summary
	NotificationNone     = "none"      // print mode: no UI
)

// Message is one parent message as the mailbox stores it.
type Message struct {
	ID      uint64 `json:"id"`
	From    string `json:"from"`
	Text    string `json:"text"` // exactly what the parent model would read
	Level   string `json:"level"`
	Source  string `json:"source"`
	Message string `json:"message"`
	AtMS    int64  `json:"at_ms"`
	// Notification is what became of the same report's UI notification:
	// NotificationShown, NotificationHeldBack or NotificationNone.
	Notification string `json:"notification"`
}

// Status is one thread's status as the relay reports it.
type Status struct {
	Path       string `json:"path"`
	Parent     string `json:"parent"`
	Owner      string `json:"owner"`
	ReportsTo  string `json:"reports_to"`
	Open       bool   `json:"open"`
	Generation uint64 `json:"generation"`
	// Delivered counts every report delivered over all generations;
	// Diagnostics keeps only the newest relay.MaxStatusDiagnostics.
	Delivered   int          `json:"delivered"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Dropped     diag.Dropped `json:"dropped"`
	// Redacted counts the secrets redacted from its reports, by rule.
	Redacted map[string]int `json:"redacted"`
}

// Diagnostic is one delivered report as a status or an event shows it.
type Diagnostic struct {
	Level   string `json:"level"`
	Source  string `json:"source"`
	Message string `json:"message"`
	AtMS    int64  `json:"at_ms"`
}

// Totals sum the statuses and notifications.
type Totals struct {
	ChildThreads int `json:"child_threads"`
	Delivered    int `json:"delivered"`
	Messages     int `json:"messages"` // parent messages in the mailbox
	// Notifications shown for reports, summaries shown, and how many report
	// notifications the summaries said were not shown.
	NotificationsShown int          `json:"notifications_shown"`
	Summaries          int          `json:"summaries"`
	NotShown           int          `json:"not_shown"`
	Dropped            diag.Dropped `json:"dropped"`
	SinkErrors         []string     `json:"sink_errors"`
}

// Start is the simulated clock's origin. Only offsets from it are shown,
// so its value does not matter; a fixed one keeps the mailbox's stored
// times, and so every run, identical.
var Start = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

func sinceStart(t time.Time) int64 { return t.Sub(Start).Milliseconds() }
