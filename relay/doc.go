// Package relay carries diagnostics from child runtimes to the parent
// session.
//
// A host makes one Manager, then for each child session calls Open with the
// child's thread path. The returned Runtime has a bus of its own
// (Runtime.Bus, made at its first call) on which the manager already
// answers the diagnostic probe and listens for reports, so the child's
// extensions may load onto it at once; the host
// calls Close after the child's shutdown hooks have run. Attribution comes
// only from which runtime's bus carried a report: nothing in a payload can
// name another thread.
//
// Each report goes parse → sanitize → redact → validate → duplicate? →
// cap? → window? (package diag, one Gate per runtime generation) and, if
// delivered, to three places. Redaction (docs/redaction.md) is on
// unless Config.NoRedaction: the sinks and the status get the redacted text,
// and the status counts the secrets redacted, by rule:
//
//  1. the parent message (Mailbox.Post) for the recipient, which is the
//     lexical parent or, for an independent root such as "/k", its owner:
//     non-waking, labeled as untrusted data, fields JSON-quoted (MessageText);
//  2. a UI notification (Notifier.Notify) with readable text such as
//     "/root/x [lint]: message", except in print mode, where the parent
//     message is the only path and nothing is written to stderr instead.
//     In that text the source (frame.Source) shows only letters, marks and
//     digits of any script and . _ - / @ : + #, every other character and
//     every Grapheme_Cluster_Break=Prepend character as "_", and starts
//     with a letter or digit, so a child cannot forge the frame ("lint]:
//     ok /root [system", a leading mark on the "[", a Prepend character
//     gluing the "]"); watch frames sources with the same function. A
//     source of which the frame keeps nothing shows as no source. The
//     parent message and the status keep the sanitized source as it is;
//  3. the thread's Status: the 20 newest delivered reports, the drop
//     counters, and the redacted secrets of every delivered report by rule.
//
// The mailbox is called first, so the durable copy exists before anything
// is shown. Sinks are called with no lock held; a sink that fails or panics
// is recorded (Config.OnSinkError, Manager.SinkErrors) and the other sinks,
// the other children and the child itself go on. Reports never change a
// child's state or output and never wake the parent: the Mailbox contract
// has no way to.
//
// # Generations
//
// Opening a path whose runtime is live, or Runtime.Reopen, starts a new
// generation: a new bus and a fresh gate. Reports still arriving on the old
// bus are ignored. The thread's Status, diagnostics included, belongs to the
// thread and carries over; it lives in memory only, so a new Manager starts
// with none (the mailbox, being durable, keeps what it stored).
//
// # Host-wide notification limit
//
// All children together may raise at most Config.NotifyRate notifications
// per second with bursts of Config.NotifyBurst (default 1/s, burst 10,
// golang.org/x/time/rate). A notification over the limit is not shown; its
// parent message and status entry are delivered as usual. When the limit
// allows again, one summary notification (Thread "") says how many were not
// shown, at the most severe level among them (so a held-back error is not
// announced as info): either before the next notification, or from a single
// timer set for the moment a token is free, whichever comes first. The
// summary takes no token of its own.
//
// # Drops and closed runtimes
//
// Each generation's gate counts its drops; Status.Dropped sums them over the
// thread's generations. A report on a closed or replaced runtime is not a
// drop: Runtime.Report returns ErrRuntimeClosed and the zero Verdict, and a
// report emitted on its closed bus reaches no one.
//
// # Concurrency
//
// A Manager and its Runtimes are safe for concurrent use. On one thread,
// reading the clock and the gate's decision are serialized through the
// thread's lock, which is never held while a sink runs; so concurrent
// reports of one thread may reach the sinks in another order than their
// status entries. The Manager starts no goroutine per runtime.
//
// Lock order: Manager.mu, then one thread's mu (never two threads' at
// once), then the runtime's bus's own lock (package bus), taken while
// Runtime.Bus makes the bus. Config.Now is called under a thread's mu, so
// it must not call the Manager. The host-wide limit's lock is a leaf:
// nothing is taken under it. No lock of the relay is held while the Mailbox, the
// Notifier, the Observer, Config.AfterFunc, Config.OnSinkError or
// Config.OnPanic run, nor while a bus is closed, so any of them may call
// the Manager.
package relay
