package service_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

func fakeToken() string {
	return "ghp_" + strings.Repeat("Q2xM9zR4pW", 3) + "7vK3nT"
}

// docs/redaction.md over the wire: the child's token reaches neither the mailbox,
// nor the status, nor an event; thread.status and thread.list count it.
func TestReportsAreRedacted(t *testing.T) {
	e := start(t, relay.ModeRPC)
	e.host.mustCall("events.subscribe", map[string]any{})
	child := e.dial(e.open("/root/x"))
	tok := fakeToken()
	child.mustCall("diagnostic.report", map[string]any{"level": "error", "message": "auth failed with token " + tok + " for repo x"})

	var st wire.Status
	e.host.mustCallInto("thread.status", map[string]any{"path": "/root/x"}, &st)
	if len(st.Diagnostics) != 1 || st.Diagnostics[0].Message != "auth failed with token [REDACTED:github-pat] for repo x" || st.Redacted["github-pat"] != 1 {
		t.Fatalf("status = %+v", st)
	}
	var ts wire.Threads
	e.host.mustCallInto("thread.list", nil, &ts)
	if len(ts.Threads) != 1 || ts.Threads[0].Redacted["github-pat"] != 1 {
		t.Fatalf("thread.list = %+v", ts)
	}
	var page wire.Page
	e.host.mustCallInto("mailbox.read", map[string]any{"recipient": "/root"}, &page)
	if len(page.Messages) != 1 || strings.Contains(page.Messages[0].Text, "ghp_") || strings.Contains(page.Messages[0].Message, "ghp_") {
		t.Fatalf("mailbox = %+v", page)
	}
	// The events and the ui.notify the host got.
	got := e.host.takeNotifications(3) // opened, delivered, ui.notify/notified in some order
	sawDelivered := false
	for _, n := range got {
		line := strings.Join(strings.Fields(strings.TrimSpace(toJSON(t, n))), " ")
		if strings.Contains(line, "ghp_") {
			t.Errorf("a notification carries the token: %s", line)
		}
		if strings.Contains(line, `"kind":"delivered"`) {
			sawDelivered = true
			if !strings.Contains(line, `"redacted":{"github-pat":1}`) {
				t.Errorf("delivered event without its count: %s", line)
			}
		}
	}
	if !sawDelivered {
		t.Errorf("no delivered event in %v", got)
	}
}

// Config.NoRedaction passes secrets, and New warns.
func TestRedactionOffWarns(t *testing.T) {
	var logged bytes.Buffer
	store, err := mailbox.Open(filepath.Join(t.TempDir(), "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := startConfig(t, service.Config{Mode: relay.ModeRPC, Mailbox: store, HelloTimeout: 2 * time.Second,
		NoRedaction: true, Logger: slog.New(slog.NewTextHandler(&logged, nil))}, store)
	if !strings.Contains(logged.String(), "redaction is off") {
		t.Errorf("no warning logged: %q", logged.String())
	}
	child := e.dial(e.open("/root/x"))
	tok := fakeToken()
	child.mustCall("diagnostic.report", map[string]any{"level": "error", "message": "token " + tok})
	var st wire.Status
	e.host.mustCallInto("thread.status", map[string]any{"path": "/root/x"}, &st)
	if len(st.Diagnostics) != 1 || !strings.Contains(st.Diagnostics[0].Message, tok) || len(st.Redacted) != 0 {
		t.Fatalf("status = %+v", st)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
