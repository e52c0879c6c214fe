package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runShell runs script with sh, with a diagrelay command on PATH that is
// this test binary, and env added to the environment (the child
// variables taken out first, as for every diagrelay run here).
func runShell(t *testing.T, env []string, script string) result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "diagrelay")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	// diagrelayCmd gives the environment; the command itself is sh.
	cmd := diagrelayCmd(ctx, t, append([]string{"PATH=" + bin + ":" + os.Getenv("PATH")}, env...))
	cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-eu", "-c", script}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("sh: %v", err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// A shell hosts a child: eval "$(diagrelay thread open PATH)" sets the
// environment, the child's report reaches the parent, and thread status
// and thread list show it; thread close revokes the token.
func TestThreadShellHostsAChild(t *testing.T) {
	s := startServer(t, "", "")
	flags := "--socket " + s.socket + " --data " + s.data
	r := runShell(t, nil, `
eval "$(diagrelay thread open /root/x `+flags+`)"
diagrelay report --level warning --source sh 'hello from a shell'
diagrelay thread status /root/x `+flags+`
diagrelay thread list `+flags)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("the shell: %v", r)
	}
	for _, want := range []string{"thread       /root/x\n", "runtime      open, generation 1\n", "parent       /root\n",
		"dropped      0 duplicate, 0 rate, 0 cap, 0 invalid\n", "redacted     0\n", "diagnostics  1\n", " warning [sh] hello from a shell\n",
		"PATH     RUNTIME  GENERATION  DIAGNOSTICS  DROPPED\n/root/x  open     1           1            0\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, text, _ := uiNotifyParams(t, s.host.nextNote(t)); text != "/root/x [sh]: hello from a shell" {
		t.Errorf("the parent was notified %q", text)
	}

	// --json: the status as the service gave it.
	out := runDiagrelay(t, nil, "", "thread", "status", "/root/x", "--json", "--socket", s.socket, "--data", s.data)
	var st struct {
		Path        string
		Open        bool
		Diagnostics []struct{ Level, Source, Message string }
	}
	if err := json.Unmarshal([]byte(out.stdout), &st); err != nil || st.Path != "/root/x" || !st.Open ||
		len(st.Diagnostics) != 1 || st.Diagnostics[0].Message != "hello from a shell" {
		t.Errorf("status --json: %v (%v)", out, err)
	}

	// Close: the status stays, closed; the old environment is revoked.
	r = runShell(t, nil, `
eval "$(diagrelay thread open /root/x `+flags+`)"
diagrelay thread close /root/x `+flags+`
diagrelay thread status /root/x `+flags+`
diagrelay report --level info late || echo "report exit $?"`)
	if r.code != 0 || !strings.Contains(r.stdout, "runtime      closed, generation 2\n") ||
		!strings.Contains(r.stdout, "report exit 1") || !strings.Contains(r.stderr, "revoked") {
		t.Errorf("close: %v", r)
	}
}

func TestThreadOpenJSONAndErrors(t *testing.T) {
	s := startServer(t, "", "")
	host := []string{"--socket", s.socket, "--data", s.data}
	r := runDiagrelay(t, nil, "", append([]string{"thread", "open", "/mine", "--owner", "/root", "--json"}, host...)...)
	var rt struct {
		Path, Token, Socket string
		Generation          uint64
	}
	if err := json.Unmarshal([]byte(r.stdout), &rt); err != nil || rt.Path != "/mine" || len(rt.Token) != 64 ||
		rt.Generation != 1 || !filepath.IsAbs(rt.Socket) {
		t.Fatalf("open --json: %v (%v)", r, err)
	}
	// The token works as a child's.
	wantExit(t, "report with the JSON token", runDiagrelay(t, s.childEnv(rt.Token), "", "report", "--level", "info", "hi"), 0, "")

	for _, tt := range []struct {
		name string
		args []string
		code int
		has  string
	}{
		{"status of a thread never opened", []string{"thread", "status", "/root/never"}, 1, "-32004"},
		{"close of a thread never opened", []string{"thread", "close", "/root/never"}, 1, "-32004"},
		{"open with a wrong parent", []string{"thread", "open", "/root/a/b", "--parent", "/root/c"}, 1, "-32602"},
		{"open without a path", []string{"thread", "open"}, 2, "missing PATH"},
		{"status with two paths", []string{"thread", "status", "/root/a", "/root/b"}, 2, `unexpected argument "/root/b"`},
	} {
		wantExit(t, tt.name, runDiagrelay(t, nil, "", append(tt.args, host...)...), tt.code, tt.has)
	}
	wantExit(t, "thread alone", runDiagrelay(t, nil, "", "thread"), 2, "give a subcommand: open, close, status, list")
	wantExit(t, "a data directory no serve has used", runDiagrelay(t, nil, "", "thread", "list", "--data", t.TempDir()), 1,
		"start the service first with 'diagrelay serve'")
	wantExit(t, "the socket of no serve", runDiagrelay(t, nil, "", "thread", "list", "--data", s.data, "--socket", s.socket+".nothing"), 1,
		"no serve is listening on "+s.socket+".nothing")
}
