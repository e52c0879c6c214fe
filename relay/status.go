package relay

import (
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/threadpath"
)

// MaxStatusDiagnostics is how many delivered reports a thread's status keeps:
// the newest ones; the oldest is evicted first.
const MaxStatusDiagnostics = 20

// Status is a thread's agent_status view of its diagnostics. The same value
// serves spawn/wait results and the completion state. It is memory-only: a
// new Manager starts with no threads.
type Status struct {
	Path   string
	Parent string // lexical parent, "" for a one-segment path
	Owner  string // creator of an independent root, else ""
	// Open reports whether a runtime of the thread is live; Generation counts
	// its opens (1 after the first Open, 2 after a reopen, ...).
	Open       bool
	Generation uint64
	// Diagnostics are the newest delivered reports, oldest first. They
	// belong to the thread and survive its runtime reopening.
	Diagnostics []Diagnostic
	// Dropped counts reports not delivered, per reason, over all of the
	// thread's generations.
	Dropped diag.Dropped
	// Redacted counts the secrets redacted from the thread's delivered
	// reports, message and source alike, by rule id, over all of its
	// generations; nil if none.
	Redacted diag.Redacted
	// Edge names the cluster edge that last delivered a report of the
	// thread, or set its drops (docs/cluster.md); "" for a local thread.
	Edge string
}

// Diagnostic is one delivered report as the status shows it.
type Diagnostic struct {
	Level   diag.Level
	Source  string
	Message string
	At      time.Time
}

// Recipient is the thread whose mailbox gets this thread's reports: its
// parent, or for an independent root its owner.
func (s Status) Recipient() string { return threadpath.Recipient(s.Parent, s.Owner) }
