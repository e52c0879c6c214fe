package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/diagrelay/diagrelay/internal/watch"
)

// The full-screen view on a real terminal: in a window under 40x12 it says
// so in what fits, and when serve stops it exits 0 and says why, as its
// help promises, rather than staying on DISCONNECTED.
func TestWatchInTmuxExitsWhenServeStops(t *testing.T) {
	s := startServer(t, "", "")
	s.open("/root/scout")
	p, codeFile := startWatch(t, s, 100, 30, true)
	p.waitFor("1 thread, 1 open")

	if out, err := p.tmux("resize-window", "-t", "w", "-x", "20", "-y", "6"); err != nil {
		t.Fatalf("resize-window: %v: %s", err, out)
	}
	small := p.waitFor("window too small")
	if words := strings.Join(strings.Fields(small), " "); !strings.Contains(words, "window too small (20x6): need 40x12; q quits") {
		t.Errorf("at 20x6 the pane shows:\n%s", small)
	}
	if out, err := p.tmux("resize-window", "-t", "w", "-x", "100", "-y", "30"); err != nil {
		t.Fatalf("resize-window: %v: %s", err, out)
	}
	p.waitFor("╭─ notifications")

	s.stop(syscall.SIGTERM)
	p.waitExit(codeFile, "serve stopped")
	screen := p.waitFor(watch.GoneMessage[:40])
	if words := strings.Join(strings.Fields(screen), " "); !strings.Contains(words, watch.GoneMessage) || strings.Contains(screen, "╭─") {
		t.Errorf("after serve stopped the pane shows:\n%s", screen)
	}
}
