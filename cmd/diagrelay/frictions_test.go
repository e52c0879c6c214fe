package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// newcomerEnv is a fresh user: a new HOME, and neither XDG_RUNTIME_DIR
// nor XDG_STATE_HOME, so every default is HOME's.
func newcomerEnv(t *testing.T) (env []string, home string) {
	home = shortTempDir(t)
	return []string{"HOME=" + home, "XDG_RUNTIME_DIR=", "XDG_STATE_HOME="}, home
}

// startReading starts cmd and returns its stdout's lines.
func startReading(t *testing.T, cmd *exec.Cmd) *bufio.Scanner {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return bufio.NewScanner(out)
}

// waitSocket waits until path is a socket.
func waitSocket(t *testing.T, path string) {
	t.Helper()
	testutil.Eventually(t, exitTimeout, "a socket at "+path, func() bool {
		fi, err := os.Lstat(path)
		return err == nil && fi.Mode()&os.ModeSocket != 0
	})
}

// Without XDG_RUNTIME_DIR, serve, thread and watch agree on the socket
// under the default data directory, with no flags at all; and once serve
// has stopped, a command says to start it, naming the socket once.
func TestNoRuntimeDirDefaults(t *testing.T) {
	env, home := newcomerEnv(t)
	socket := filepath.Join(home, ".local", "state", "diagrelay", "diagrelay.sock")
	serve := diagrelayCmd(context.Background(), t, env, "serve")
	var serveErr strings.Builder
	serve.Stderr = &serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	waitSocket(t, socket)

	envFile := filepath.Join(home, "child.env")
	if r := runShell(t, env, `diagrelay thread open /root/x >`+envFile); r.code != 0 || r.stderr != "" {
		t.Fatalf("thread open: %v", r)
	}
	watch := diagrelayCmd(context.Background(), t, env, "watch", "--plain")
	lines := startReading(t, watch)
	t.Cleanup(func() { watch.Process.Kill(); watch.Wait() })
	if !lines.Scan() || !strings.Contains(lines.Text(), "/root/x") { // the thread list, before any event
		t.Fatalf("watch's first line: %q, %v", lines.Text(), lines.Err())
	}

	r := runShell(t, env, `. `+envFile+`; diagrelay report --level info 'no flags needed'`)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("thread open and report: %v", r)
	}
	for lines.Scan() {
		if strings.Contains(lines.Text(), "no flags needed") {
			break
		}
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, serveErr.String())
	}
	for lines.Scan() { // watch ends when serve goes away
	}
	if err := watch.Wait(); err != nil {
		t.Errorf("watch after serve stopped: %v", err)
	}

	for _, args := range [][]string{{"thread", "list"}, {"watch"}} {
		r = runDiagrelay(t, env, "", args...)
		wantExit(t, strings.Join(args, " ")+" after serve stopped", r, 1, "start one with 'diagrelay serve'")
		if n := strings.Count(r.stderr, socket); n != 1 || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: the socket named %d times, in %q; want once, in one line", args, n, r.stderr)
		}
	}
}

// watch before any serve has run says to start serve, in one line.
func TestWatchBeforeServe(t *testing.T) {
	env, _ := newcomerEnv(t)
	for _, args := range [][]string{{"watch"}, {"thread", "list"}} {
		r := runDiagrelay(t, env, "", args...)
		wantExit(t, strings.Join(args, " "), r, 1, "start the service first with 'diagrelay serve'")
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: %q is more than one line", args, r.stderr)
		}
	}
}

// A socket path over sun_path's limit is refused with the limit, by serve
// (given or defaulted under a long --data) and by the commands that dial.
func TestSocketPathLimit(t *testing.T) {
	d := shortTempDir(t)
	long := filepath.Join(d, strings.Repeat("x", 120-len(d)-1))
	r := runDiagrelay(t, nil, "", "serve", "--stdio", "--socket", long, "--data", filepath.Join(d, "data"))
	wantExit(t, "serve --socket <120 bytes>", r, 1, "diagrelay serve: socket path "+long+" is 120 bytes, over the 107 bytes")
	longData := filepath.Join(d, strings.Repeat("d", 100))
	r = runDiagrelay(t, []string{"XDG_RUNTIME_DIR="}, "", "serve", "--stdio", "--data", longData)
	wantExit(t, "serve --data <long>", r, 1, "set XDG_RUNTIME_DIR")
	if err := os.MkdirAll(filepath.Join(d, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "data", "host.token"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runDiagrelay(t, nil, "", "watch", "--socket", long, "--data", filepath.Join(d, "data"))
	wantExit(t, "watch --socket <120 bytes>", r, 1, "over the 107 bytes")
	if strings.Contains(r.stderr+r.stdout, "invalid argument") {
		t.Errorf("the kernel's words leaked: %v", r)
	}
}

// serve's start-up errors are "diagrelay serve: …" lines, as every
// command's errors are, not log records; a second serve on a data
// directory says another serve holds it, in words.
func TestServeStartupErrors(t *testing.T) {
	s := startServer(t, "", "")
	r := runDiagrelay(t, nil, "", "serve", "--stdio", "--socket", s.socket+"2", "--data", s.data)
	wantExit(t, "a second serve on the data directory", r, 1,
		"diagrelay serve: another diagrelay serve holds the data directory "+s.data)
	if strings.Contains(r.stderr, "Store") || strings.Contains(r.stderr, "level=") {
		t.Errorf("Go or log words in %q", r.stderr)
	}

	d := shortTempDir(t)
	loose := filepath.Join(d, "loose")
	if err := os.Mkdir(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		has  string
	}{
		{"a data directory others can read", []string{"--data", loose, "--socket", filepath.Join(d, "s")}, "refusing to use the data directory"},
		{"a socket in no directory", []string{"--data", filepath.Join(d, "data"), "--socket", filepath.Join(d, "nope", "s")},
			"cannot listen on " + filepath.Join(d, "nope", "s") + ": directory " + filepath.Join(d, "nope") + " does not exist"},
	} {
		r := runDiagrelay(t, nil, "", append([]string{"serve", "--stdio"}, tt.args...)...)
		wantExit(t, tt.name, r, 1, "diagrelay serve: "+tt.has)
		if !strings.HasPrefix(r.stderr, "diagrelay serve: ") || strings.Contains(r.stderr, "level=") {
			t.Errorf("%s: stderr %q is not a diagrelay serve: line", tt.name, r.stderr)
		}
	}
}

// demo --watch ended by a signal removes its temporary directory.
func TestDemoWatchSignalLeavesNoTempDir(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		tmp := shortTempDir(t)
		cmd := diagrelayCmd(context.Background(), t, []string{"TMPDIR=" + tmp}, "demo", "--watch")
		lines := startReading(t, cmd)
		if !lines.Scan() {
			t.Fatalf("%v: demo --watch printed nothing", sig)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
			t.Fatalf("%v: the demo's temporary directory is not there: %v", sig, entries)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: demo --watch: %v", sig, err)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
			t.Errorf("%v: left behind: %v", sig, entries)
		}
	}
}
