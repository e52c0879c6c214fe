package relay

import (
	"fmt"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// deliver sends an admitted report to the mailbox and, outside print mode,
// through the toast limiter to the notifier. No lock is held: sinks are
// user code. It returns the mailbox's error, which the service turns into
// an error reply.
func (m *Manager) deliver(rt *Runtime, r diag.Report, now time.Time) error {
	var postErr error
	if m.mailbox != nil {
		msg := parentMessage(rt.recipient, rt.t.path, r, now)
		postErr = m.callSink("mailbox", func() error { return m.mailbox.Post(msg) })
	}
	m.offerNotification(rt.t.path, r, now)
	return postErr
}

// parentMessage is the parent message of a delivered report.
func parentMessage(recipient, from string, r diag.Report, at time.Time) diag.ParentMessage {
	return diag.ParentMessage{Recipient: recipient, From: from, Text: MessageText(from, r),
		Level: r.Level, Source: r.Source, Message: r.Message, At: at}
}

// offerNotification offers a delivered report's notification to the
// toast limiter, outside print mode.
func (m *Manager) offerNotification(from string, r diag.Report, now time.Time) {
	if m.showsNotifications() {
		m.toasts.offer(Notification{Thread: from, Text: notificationText(from, r), Level: r.Level}, now)
	}
}

// held is the toast limiter's hold func: a watcher sees what the limit
// kept from the Notifier.
func (m *Manager) held(n Notification, now time.Time) {
	m.observe(Observation{Kind: ObservedHeld, Thread: n.Thread, At: now, Notification: n})
}

func (m *Manager) showsNotifications() bool { return m.mode != ModePrint && m.notifier != nil }

// notify is the toast limiter's emit func.
func (m *Manager) notify(n Notification) {
	if m.showsNotifications() {
		m.observe(Observation{Kind: ObservedNotification, Thread: n.Thread, At: m.now(), Notification: n})
		m.callSink("notifier", func() error { return m.notifier.Notify(n) })
	}
}

// callSink runs one sink call, turning a panic into an error, and records
// any failure. The failure does not stop the other sinks or the child.
func (m *Manager) callSink(name string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("relay: %s sink panicked: %v", name, p)
		}
		if err != nil {
			m.sinkErrors.Add(1)
			if m.onSinkErr != nil {
				func() {
					defer func() { _ = recover() }() // the hook is user code too
					m.onSinkErr(err)
				}()
			}
		}
	}()
	if err := f(); err != nil {
		return fmt.Errorf("relay: %s sink: %w", name, err)
	}
	return nil
}
