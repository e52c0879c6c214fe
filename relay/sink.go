package relay

import "github.com/diagrelay/diagrelay/diag"

// Notification is one UI notification for the parent session.
type Notification struct {
	// Thread is the child thread path the report came from, or "" for the
	// host-wide summary of notifications that were not shown.
	Thread string
	// Text is readable, already sanitized text naming the thread path, the
	// source (if any) and the message.
	Text string
	// Level is the report's level; it maps to pi's notifyType.
	Level diag.Level
}

// Notifier is the parent session's UI notify API. It is never called in
// print mode.
type Notifier interface {
	Notify(n Notification) error
}

// Mailbox delivers a diag.ParentMessage to its recipient. Post returns only once the
// message is stored as durably as the mailbox can store it; an error means
// it was not stored.
type Mailbox interface {
	Post(m diag.ParentMessage) error
}
