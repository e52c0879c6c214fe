package wire

import "time"

// UINotify is the params of the ui.notify notification (pi's notify
// request). Thread is "" for the summary of notifications held back by the
// host-wide limit.
type UINotify struct {
	Thread     string `json:"thread"`
	Message    string `json:"message"`
	NotifyType string `json:"notifyType"`
}

// Event kinds, the "kind" of an event notification.
const (
	EventOpened    = "opened"    // generation 1 of a thread
	EventReopened  = "reopened"  // a later generation: a retained session opened again
	EventClosed    = "closed"    // runtime.close of a live runtime
	EventDelivered = "delivered" // a report passed the gate: level, source, message
	EventDropped   = "dropped"   // a report did not: reason
	EventNotified  = "notified"  // a UI notification was shown; thread "" for the summary
	EventHeld      = "held"      // the host-wide limit held a notification back
	EventLost      = "lost"      // count events this subscriber did not read in time
	EventExited    = "exited"    // a bound token's process exited; the thread stays open
)

// Event is the params of one event notification. Members that do not
// belong to its kind are left out: the pointer members are set (perhaps
// to "") exactly for the kinds named beside them. Str reads one.
type Event struct {
	Kind       string    `json:"kind"`
	Thread     string    `json:"thread"`
	At         time.Time `json:"at"`
	Parent     *string   `json:"parent,omitempty"`     // opened, reopened
	Owner      *string   `json:"owner,omitempty"`      // opened, reopened
	Generation uint64    `json:"generation,omitempty"` // opened, reopened, closed, exited
	Level      string    `json:"level,omitempty"`      // delivered
	Source     *string   `json:"source,omitempty"`     // delivered ("" when absent)
	Message    *string   `json:"message,omitempty"`    // delivered, notified, held
	NotifyType string    `json:"notifyType,omitempty"` // notified, held
	Reason     string    `json:"reason,omitempty"`     // dropped: a Reason* value
	Count      uint64    `json:"count,omitempty"`      // lost
	Peer       *Peer     `json:"peer,omitempty"`       // exited: the process that exited
	Redacted   Redacted  `json:"redacted,omitempty"`   // delivered, when secrets were redacted from it
	Edge       string    `json:"edge,omitempty"`       // delivered, on a cluster's home: the edge that admitted it
}

// Str is *p, or "" for a member that is absent.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Ptr returns a pointer to s, for a member that is present.
func Ptr(s string) *string { return &s }
