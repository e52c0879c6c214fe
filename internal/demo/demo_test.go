package demo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// The transcript says which delivered reports the host-wide limit held
// back, in the summary that counted them, in their parent message and in
// their event; the summary's level is the most severe of theirs.
func TestHeldBackReports(t *testing.T) {
	tr, err := Run(relay.ModeRPC)
	if err != nil {
		t.Fatal(err)
	}
	summarized := 0
	for _, n := range tr.Notifications {
		if !n.Summary {
			if len(n.HeldBack) != 0 {
				t.Errorf("a report's notification lists held-back reports: %+v", n)
			}
			continue
		}
		var k int
		if _, err := fmt.Sscanf(n.Text, "%d", &k); err != nil || k != len(n.HeldBack) {
			t.Errorf("summary %q lists %d held-back reports", n.Text, len(n.HeldBack))
		}
		worst := diag.Level("")
		for _, h := range n.HeldBack {
			if diag.Level(h.Level).Severity() > worst.Severity() {
				worst = diag.Level(h.Level)
			}
		}
		if n.Level != string(worst) {
			t.Errorf("summary at level %s, the most severe held back is %s", n.Level, worst)
		}
		summarized += k
	}
	marked, tallied := 0, 0
	for _, mb := range tr.Mailboxes {
		for _, m := range mb.Messages {
			switch m.Notification {
			case NotificationHeldBack:
				marked++
			case NotificationShown:
			default:
				t.Errorf("message %d: notification %q", m.ID, m.Notification)
			}
		}
	}
	for _, e := range tr.Events {
		if e.Tally != nil {
			tallied += e.Tally.HeldBack
		}
	}
	if summarized == 0 || marked != summarized || tallied != summarized || tr.Totals.NotShown != summarized {
		t.Errorf("held back: %d in summaries, %d messages marked, %d in events, %d in totals",
			summarized, marked, tallied, tr.Totals.NotShown)
	}

	pr, err := Run(relay.ModePrint)
	if err != nil {
		t.Fatal(err)
	}
	for _, mb := range pr.Mailboxes {
		for _, m := range mb.Messages {
			if m.Notification != NotificationNone {
				t.Errorf("print mode: message %d notification %q", m.ID, m.Notification)
			}
		}
	}
}

// The JSON carries data, not text for the screen: nothing cut for display.
func TestJSONHasNoScreenText(t *testing.T) {
	tr, err := Run(relay.ModeRPC)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"cut for display", "--json has all", "[summary]"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the JSON transcript contains %q", s)
		}
	}
	for _, e := range tr.Events {
		if e.Delivered != nil && strings.Contains(e.Result, e.Delivered.Message) {
			t.Errorf("event result %q repeats the delivered text", e.Result)
		}
	}
}
