package service_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/internal/servetest"
	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/service"
)

// A crowd of connections cannot flood the log, which may be the parent's
// terminal: 300 evictions from the pending set give at most 10 lines, and
// the next line says how many were suppressed.
func TestConnectionFloodDoesNotFloodTheLog(t *testing.T) {
	clock := simclock.New(time.Unix(1000, 0))
	var out servetest.SyncBuffer
	store := newStore(t)
	log := slog.New(serve.NewLimitHandler(slog.NewTextHandler(&out, nil), 10, clock.Now))
	e := startConfig(t, service.Config{Mailbox: store, MaxPending: 2, HelloTimeout: time.Minute, Logger: log}, store)
	for range 300 {
		rawDial(t, e.socket)
	}
	testutil.Eventually(t, 5*time.Second, "290 pending peers evicted", func() bool { return e.srv.Stats().PendingEvicted >= 290 })
	if n := strings.Count(out.String(), "\n"); n > 10 {
		t.Fatalf("%d log lines for 300 connections in one second:\n%s", n, out.String())
	}
	clock.Advance(time.Second)
	rawDial(t, e.socket)
	rawDial(t, e.socket)
	rawDial(t, e.socket)
	testutil.Eventually(t, 5*time.Second, "the summary line", func() bool { return strings.Contains(out.String(), "suppressed") })
	if !strings.Contains(out.String(), "lines\"") {
		t.Fatalf("no summary:\n%s", out.String())
	}
}
