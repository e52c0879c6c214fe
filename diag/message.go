package diag

import "time"

// ParentMessage is one non-waking parent message: a delivered report
// addressed to the recipient thread (parent ?? owner of the reporting
// thread). It lives here, beside Report, so that a mailbox can store it
// without importing the relay that routes it.
type ParentMessage struct {
	Recipient string
	From      string
	Text      string // the labeled, JSON-quoted form of relay.MessageText
	Level     Level
	Source    string
	Message   string
	At        time.Time
}
