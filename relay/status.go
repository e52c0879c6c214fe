package relay

import (
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// MaxStatusDiagnostics is how many delivered reports a thread's status keeps:
// the newest ones; the oldest is evicted first.
const MaxStatusDiagnostics = 20

// Status is a thread's agent_status view of its diagnostics. The same value
// serves spawn/wait results and the completion state. It is memory-only: a
// new Manager starts with no threads.
type Status struct {
	Path   string `json:"path"`
	Parent string `json:"parent"` // lexical parent, "" for a one-segment path
	Owner  string `json:"owner"`  // creator of an independent root, else ""
	// Open reports whether a runtime of the thread is live; Generation counts
	// its opens (1 after the first Open, 2 after a reopen, ...).
	Open       bool   `json:"open"`
	Generation uint64 `json:"generation"`
	// Diagnostics are the newest delivered reports, oldest first. They
	// belong to the thread and survive its runtime reopening.
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Dropped counts reports not delivered, per reason, over all of the
	// thread's generations.
	Dropped Dropped `json:"dropped"`
}

// Diagnostic is one delivered report as the status shows it.
type Diagnostic struct {
	Level   diag.Level `json:"level"`
	Source  string     `json:"source"`
	Message string     `json:"message"`
	At      time.Time  `json:"at"`
}

// Recipient is the thread whose mailbox gets this thread's reports: its
// parent, or for an independent root its owner.
func (s Status) Recipient() string { return recipient(s.Parent, s.Owner) }

// Dropped counts silent drops per reason: duplicate, rate, cap, invalid.
type Dropped struct {
	Duplicate int `json:"duplicate"`
	Rate      int `json:"rate"`
	Cap       int `json:"cap"`
	Invalid   int `json:"invalid"`
}

// plus adds a gate's drop counts to d.
func (d Dropped) plus(c diag.Counts) Dropped {
	d.Duplicate += int(c.Duplicate)
	d.Rate += int(c.Rate)
	d.Cap += int(c.Cap)
	d.Invalid += int(c.Invalid)
	return d
}
