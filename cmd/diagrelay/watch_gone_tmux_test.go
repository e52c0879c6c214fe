package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/watch"
)

// The full-screen view on a real terminal: in a window under 40x12 it says
// so in what fits, and when serve stops it exits 0 and says why, as its
// help promises (it used to stay on DISCONNECTED).
func TestWatchInTmuxExitsWhenServeStops(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	s := startServer(t, "", "")
	s.open("/root/scout")

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := shortTempDir(t)
	p := &tmuxPane{t: t, sock: filepath.Join(dir, "tmux")}
	codeFile := filepath.Join(dir, "code")
	// The shell stays after watch, so the pane still shows what it printed.
	script := fmt.Sprintf("env %s=1 GORACE=atexit_sleep_ms=0 TERM=xterm-256color %q watch --socket %q --data %q; echo $? > %q; exec sleep 60",
		mainEnv, exe, s.socket, s.data, codeFile)
	if out, err := p.tmux("-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", "-s", "w", script); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { p.tmux("kill-server") })
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
	deadline := time.Now().Add(exitTimeout)
	for {
		if b, err := os.ReadFile(codeFile); err == nil && len(b) > 0 {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Fatalf("watch exited %s when serve stopped", code)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not exit when serve stopped:\n%s", p.capture())
		}
		time.Sleep(50 * time.Millisecond)
	}
	screen := p.waitFor(watch.GoneMessage[:40])
	if words := strings.Join(strings.Fields(screen), " "); !strings.Contains(words, watch.GoneMessage) || strings.Contains(screen, "╭─") {
		t.Errorf("after serve stopped the pane shows:\n%s", screen)
	}
}
