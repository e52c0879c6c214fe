package main

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/diagrelay/diagrelay/internal/cli"
)

// help and help CMD print on stdout and exit 0; the list is the ordered
// command list, each with its usage line.
func TestHelp(t *testing.T) {
	commands := newRoot().Link().Commands
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		out, errOut, code := runCmd(t, args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		last := -1
		for _, c := range commands {
			listed := []*cli.Command{c}
			if c.Run == nil { // a group: its subcommands are listed
				listed = c.Commands
			}
			for _, l := range listed {
				i := strings.Index(out, "\t"+l.UsageLine()+"\n")
				if i < 0 || i < last {
					t.Errorf("%v: %s's usage line missing or out of order:\n%s", args, l.Path(), out)
				}
				last = i
			}
		}
	}
	for _, c := range commands {
		out, errOut, code := runCmd(t, "help", c.Name)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: diagrelay "+c.Name) {
			t.Errorf("help %s: exit %d, stdout %.60q, stderr %q", c.Name, code, out, errOut)
		}
	}
	if _, errOut, code := runCmd(t, "help", "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("help frobnicate: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := runCmd(t); code != 2 || !strings.Contains(errOut, "Usage:") {
		t.Errorf("no command: exit %d, stderr %q", code, errOut)
	}
}

// help X prints X's help without running X: "help serve" with a data
// directory it could not create would fail if serve ran.
func TestHelpDoesNotRun(t *testing.T) {
	r := runDiagrelay(t, []string{"XDG_STATE_HOME=/proc/nope", "XDG_RUNTIME_DIR=/proc/nope"}, "", "help", "serve")
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "Flags:") {
		t.Errorf("help serve: %v", r)
	}
}

// Every command's -h exits 0 with its usage.
func TestEveryDashHExitsZero(t *testing.T) {
	for _, c := range newRoot().Commands {
		_, errOut, code := runCmd(t, c.Name, "-h")
		if code != 0 || !strings.Contains(errOut, "usage: diagrelay "+c.Name) {
			t.Errorf("%s -h: exit %d, stderr %q", c.Name, code, errOut)
		}
	}
}

// A usage error is one line saying what is wrong, and a pointer to the
// help: never the whole usage, and checked before any connection (there is
// no serve here, so a connection would fail with exit 1).
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		has  string
	}{
		{[]string{"report", "hi"}, "--level is required: give --level info, warning or error"},
		{[]string{"report", "--level", "WARN", "hi"}, `invalid value "WARN" for flag -level: want info, warning or error`},
		{[]string{"report", "--level", "info"}, "missing MESSAGE"},
		{[]string{"probe", "--min", "latest"}, "latest"},
		{[]string{"serve", "--mode", "gui"}, "want tui, rpc or print"},
		{[]string{"watch", "--plain", "--json"}, "not both"},
		{[]string{"mailbox"}, "give a subcommand: check"},
		{[]string{"mailbox", "repair"}, `unknown subcommand "repair" (there is: check)`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		r := runDiagrelay(t, []string{envSocket + "=/nonexistent/s", envToken + "=x"}, "", tt.args...)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if r.code != 2 || r.stdout != "" || len(lines) != 2 || !strings.Contains(lines[0], tt.has) ||
			!strings.HasPrefix(lines[1], "Run 'diagrelay help") {
			t.Errorf("%q: %v; want exit 2, one line with %q, then the pointer to help", tt.args, r, tt.has)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"-v"}, {"version"}} {
		out, errOut, code := runCmd(t, args...)
		if code != 0 || out != "diagrelay 1.1.0 (protocol 1)\n" || errOut != "" {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errOut)
		}
	}
}

// Flags after the message are flags, "--" ends them, "-" reads stdin,
// and a bad flag after the message is a usage error.
func TestReportArguments(t *testing.T) {
	s := startServer(t, "", "")
	tok, _ := s.open("/root/args")
	env := s.childEnv(tok)
	for _, tt := range []struct {
		args        []string
		stdin       string
		source, msg string
		code        int
		stderrHas   string
	}{
		{[]string{"--level", "info", "msg", "--source", "x"}, "", "x", "msg", 0, ""},
		{[]string{"--level", "info", "two", "words", "--source=y", "three"}, "", "y", "two words three", 0, ""},
		{[]string{"--level", "info", "--", "msg", "--source", "z"}, "", "", "msg --source z", 0, ""},
		{[]string{"--level", "warning", "--source", "in", "-"}, "from\nstdin\n", "in", "from stdin", 0, ""},
		{[]string{"--level", "info", "msg", "--sauce", "x"}, "", "", "", 2, "sauce"},
	} {
		r := runDiagrelay(t, env, tt.stdin, append([]string{"report"}, tt.args...)...)
		wantExit(t, strings.Join(tt.args, " "), r, tt.code, tt.stderrHas)
		if tt.code != 0 {
			continue
		}
		_, text, _ := uiNotifyParams(t, s.host.nextNote(t))
		want := "/root/args: " + tt.msg
		if tt.source != "" {
			want = "/root/args [" + tt.source + "]: " + tt.msg
		}
		if text != want {
			t.Errorf("%q: notified %q, want %q", tt.args, text, want)
		}
	}
	// A message far over the 64 KiB frame is taken, cut to 1000.
	r := runDiagrelay(t, env, strings.Repeat("x", 100<<10), "report", "--level", "error", "-")
	wantExit(t, "a 100 KiB message from stdin", r, 0, "")
	if msgs := readMailbox(t, s.host, "/root", 0); len(msgs) != 5 || len(utf16.Encode([]rune(msgs[4].Message))) != 1000 {
		t.Errorf("mailbox: %d messages", len(msgs))
	}
}

// With no --socket, serve listens on $XDG_RUNTIME_DIR/diagrelay.sock, or
// inside --data without XDG_RUNTIME_DIR.
func TestServeDefaultSocket(t *testing.T) {
	for _, xdg := range []bool{true, false} {
		d := shortTempDir(t)
		data := filepath.Join(d, "data")
		want := filepath.Join(data, "diagrelay.sock")
		env := []string{"XDG_RUNTIME_DIR="}
		if xdg {
			env = []string{"XDG_RUNTIME_DIR=" + d}
			want = filepath.Join(d, "diagrelay.sock")
		}
		cmd := diagrelayCmd(t.Context(), t, env, "serve", "--stdio", "--data", data)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitSocket(t, want)
		stdin.Close() // the host goes away: serve ends
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// Every section of help.txt is a command's: a command renamed or removed
// leaves no help behind (a command without a section panics in newRoot).
func TestHelpTextHasNoStaleSection(t *testing.T) {
	paths := map[string]bool{}
	var walk func(c *cli.Command)
	walk = func(c *cli.Command) {
		for _, sub := range c.Commands {
			paths[sub.Path()] = true
			walk(sub)
		}
	}
	walk(newRoot().Link())
	for _, p := range help.Paths() {
		if !paths[p] {
			t.Errorf("help.txt has [%s], which is no command (commands: %v)", p, paths)
		}
	}
}
