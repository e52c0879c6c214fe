package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// tmuxPane runs one command in a detached tmux session of a fixed size on
// a private tmux server (its own socket), killed at cleanup.
type tmuxPane struct {
	t    *testing.T
	sock string
}

func (p *tmuxPane) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	return string(out), err
}

func (p *tmuxPane) capture(flags ...string) string {
	p.t.Helper()
	out, err := p.tmux(append([]string{"capture-pane", "-p", "-t", "w"}, flags...)...)
	if err != nil {
		p.t.Fatalf("capture-pane: %v: %s", err, out)
	}
	return out
}

// waitFor polls the pane until it shows want.
func (p *tmuxPane) waitFor(want string) string {
	p.t.Helper()
	var s string
	testutil.EventuallyShow(p.t, replyTimeout, func() bool {
		s = p.capture()
		return strings.Contains(s, want)
	}, func() string { return fmt.Sprintf("pane never showed %q; it shows:\n%s", want, s) })
	return s
}

// The hostile report: it tries to set the title, clear the screen, move
// the cursor, link, pick colours (underline, strike, a background) and
// turn the text right-to-left.
const tmuxHostile = "\x1b]0;PWNED\x07\x1b[2J\x1b[H\x1b[5;5H\x1b[3A\x1b7" +
	"\x1b]8;;http://evil.example/\x1b\\click here\x1b]8;;\x1b\\ " +
	"\x1b[4;9;45;48;5;201mstyled by the child\x1b[0m \u202eevil\u202c end"

// sanitized is what that report becomes.
const tmuxSanitized = "click here styled by the child evil end"

// startWatch runs `diagrelay watch` on s in a pane of cols × lines, the
// shell then writing its exit code to the file returned; with stay, the
// shell then waits, so the pane keeps what watch printed last.
func startWatch(t *testing.T, s *server, cols, lines int, stay bool) (*tmuxPane, string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := shortTempDir(t)
	p := &tmuxPane{t: t, sock: filepath.Join(dir, "tmux")}
	codeFile := filepath.Join(dir, "code")
	script := fmt.Sprintf("env %s=1 GORACE=atexit_sleep_ms=0 TERM=xterm-256color %q watch --socket %q --data %q; echo $? > %q",
		mainEnv, exe, s.socket, s.data, codeFile)
	if stay {
		script += "; exec sleep 60"
	}
	if out, err := p.tmux("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(lines), "-s", "w", script); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { p.tmux("kill-server") })
	return p, codeFile
}

// waitExit waits for watch's exit code in codeFile and wants it 0; after
// says what should have made it exit.
func (p *tmuxPane) waitExit(codeFile, after string) {
	p.t.Helper()
	var code string
	testutil.EventuallyShow(p.t, exitTimeout, func() bool {
		b, err := os.ReadFile(codeFile)
		code = strings.TrimSpace(string(b))
		return err == nil && len(b) > 0
	}, func() string { return fmt.Sprintf("watch did not exit after %s:\n%s", after, p.capture()) })
	if code != "0" {
		p.t.Fatalf("watch exited %s after %s", code, after)
	}
}

func TestWatchInTmux(t *testing.T) {
	s := startServer(t, "", "")
	scout, _ := s.open("/root/scout")
	s.open("/k", "owner", "/root")
	const cols, lines = 100, 30
	p, codeFile := startWatch(t, s, cols, lines, false)
	p.waitFor("╭─ notifications")
	// The tree comes from thread.list, which watch calls once its events
	// subscription is answered: a report sent before that would reach the
	// tree (through the list) but not the notifications panel.
	p.waitFor("scout g1")
	title, _ := p.tmux("display-message", "-p", "-t", "w", "#{pane_title}")

	child := s.dial(scout)
	if _, err := child.call("diagnostic.report", map[string]string{"level": "error", "source": "li\x1b[31mnt", "message": tmuxHostile}); err != nil {
		t.Fatal(err)
	}
	screen := p.waitFor("[lint]: " + tmuxSanitized)
	p.waitFor("[lint] click here styled") // the detail panel (cut at its edge), once thread.status is in

	screen = p.capture()
	rows := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	if len(rows) != lines {
		t.Fatalf("%d rows:\n%s", len(rows), screen)
	}
	for _, bad := range []string{"PWNED", "http", "evil.example", "\u202e"} {
		if strings.Contains(screen, bad) {
			t.Errorf("%q on screen:\n%s", bad, screen)
		}
	}
	if now, _ := p.tmux("display-message", "-p", "-t", "w", "#{pane_title}"); now != title {
		t.Errorf("pane title changed from %q to %q", title, now)
	}
	// The frame is where watch drew it: header, the two panels side by
	// side with their edges on every row, the feed, the footer.
	treeW := max(20, min(48, cols*2/5))
	feedH := max(4, min(12, lines/4))
	bodyH := lines - 2 - feedH
	if !strings.HasPrefix(rows[0], " diagrelay watch · ") || !strings.Contains(rows[lines-1], "q quit") {
		t.Errorf("header or footer lost:\n%s", screen)
	}
	for y := 1; y <= bodyH; y++ {
		r := []rune(rows[y])
		if len(r) != cols || !strings.ContainsRune("│╭╰", r[0]) || !strings.ContainsRune("│╮╯", r[treeW-1]) ||
			!strings.ContainsRune("│╭╰", r[treeW]) || !strings.ContainsRune("│╮╯", r[cols-1]) {
			t.Errorf("row %d is broken: %q", y, rows[y])
		}
	}
	if !strings.HasPrefix(rows[bodyH+1], "╭─ notifications") || !strings.HasPrefix(rows[lines-2], "╰") {
		t.Errorf("feed misplaced:\n%s", screen)
	}
	found := false
	for y := 1; y < bodyH; y++ {
		r := []rune(rows[y])
		if i := strings.Index(string(r[treeW:]), "[lint] click here styled by the child ev…│"); i >= 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("the sanitized text is not in the detail panel:\n%s", screen)
	}

	// With escapes: no hyperlink, and no attribute or colour that watch
	// does not use (the child asked for underline, strike, a background).
	esc := p.capture("-e")
	if strings.Contains(esc, "\x1b]8;") {
		t.Errorf("hyperlink in the pane")
	}
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(esc, -1) {
		ps := strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' })
		for i := 0; i < len(ps); i++ {
			switch n, _ := strconv.Atoi(ps[i]); {
			case n == 38:
				i += 2 // 38;5;N: a foreground, which watch picks
			case n == 4 || n == 9 || n == 21 || n == 53 || n == 48 || (n >= 40 && n <= 47) || (n >= 100 && n <= 107):
				t.Fatalf("SGR %q in the pane: not one of watch's", m[0])
			}
		}
	}

	// A smaller window: the view is drawn again at its size, still whole.
	if out, err := p.tmux("resize-window", "-t", "w", "-x", "70", "-y", "20"); err != nil {
		t.Fatalf("resize-window: %v: %s", err, out)
	}
	var small []string
	testutil.EventuallyShow(t, replyTimeout, func() bool {
		small = strings.Split(strings.TrimSuffix(p.capture(), "\n"), "\n")
		last := []rune(small[len(small)-1])
		return len(small) == 20 && len(last) == 70 && strings.Contains(string(last), "↑↓/jk") &&
			strings.HasPrefix(small[0], " diagrelay watch") && strings.HasSuffix(small[1], "╮")
	}, func() string { return "not redrawn at 70x20:\n" + strings.Join(small, "\n") })

	if out, err := p.tmux("send-keys", "-t", "w", "q"); err != nil {
		t.Fatalf("send-keys: %v: %s", err, out)
	}
	p.waitExit(codeFile, "q")
}
