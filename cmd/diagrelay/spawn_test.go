package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// This file tests spawn tokens (docs/protocol.md, "Spawn tokens") on the
// real binary. The test process is serve's parent, so the stdio host's
// process: the processes it starts are its descendants, and a process
// re-parented away from it (an orphan) is not.

// spawnHelperEnv makes the test binary a spawned child (spawnHelper)
// instead of running the tests: it reads DIAGRELAY_PARENT as a process
// started below the parent would.
const spawnHelperEnv = "DIAGRELAY_TEST_SPAWNED"

func init() {
	if mode := os.Getenv(spawnHelperEnv); mode != "" {
		os.Exit(spawnHelper(mode, os.Args[1:]))
	}
}

// parentEnv is DIAGRELAY_PARENT's value: the socket, the spawn token and
// the path to open below.
type parentEnv struct {
	Socket string `json:"socket"`
	Token  string `json:"token"`
	Path   string `json:"path"`
}

// spawnHelper is a spawned child: with mode "child" it opens args[0] (a
// name below the parent's path) with the spawn token, says hello with
// the new token, reports args[1] and writes "ok PATH" or "error CODE
// MESSAGE" to args[2]. With mode "orphan" it starts itself as a
// "child-of-orphan" and exits at once; that child waits for the end of its
// stdin, which runSpawned closes once it has seen the orphan exit, so that
// the child is re-parented away from the test process before it connects.
func spawnHelper(mode string, args []string) int {
	if mode == "orphan" {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), spawnHelperEnv+"=child-of-orphan")
		cmd.Stdin = os.Stdin // the write end stays with the test
		if err := cmd.Start(); err != nil {
			return 1
		}
		return 0
	}
	if mode == "child-of-orphan" {
		io.Copy(io.Discard, os.Stdin) // until the test has reaped the orphan
	}
	out := args[2]
	write := func(s string) int {
		os.WriteFile(out+".tmp", []byte(s), 0o600)
		os.Rename(out+".tmp", out)
		return 0
	}
	var p parentEnv
	if err := json.Unmarshal([]byte(os.Getenv("DIAGRELAY_PARENT")), &p); err != nil {
		return write("error 0 DIAGRELAY_PARENT: " + err.Error())
	}
	c, err := dialSocket(p.Socket, "")
	if err != nil {
		return write("error 0 " + err.Error())
	}
	defer c.Close()
	var res wire.OpenResult
	if err := c.callInto(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: p.Token, Path: p.Path + "/" + args[0]}, &res); err != nil {
		var re *wire.Error
		if errors.As(err, &re) {
			return write(fmt.Sprintf("error %d %s", re.Code, re.Message))
		}
		return write("error 0 " + err.Error())
	}
	if err := c.callInto(wire.MethodHello, wire.HelloParams{Token: res.Token}, nil); err != nil {
		return write("error 0 hello: " + err.Error())
	}
	if err := c.callInto(wire.MethodDiagnosticReport, map[string]string{"level": "warning", "message": args[1]}, nil); err != nil {
		return write("error 0 report: " + err.Error())
	}
	return write("ok " + res.Path)
}

// spawnToken asks the stdio host's spawn token for path and returns
// DIAGRELAY_PARENT's value.
func spawnToken(t *testing.T, s *server, path string) string {
	t.Helper()
	var res wire.SpawnToken
	if err := s.host.callInto(wire.MethodSpawnToken, wire.PathParams{Path: path}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Path != path || len(res.Token) != 64 {
		t.Fatalf("spawn.token gave %+v", res)
	}
	b, _ := json.Marshal(parentEnv{Socket: s.socket, Token: res.Token, Path: path})
	return string(b)
}

// runSpawned runs the helper in mode with DIAGRELAY_PARENT=parent and
// returns what it wrote.
func runSpawned(t *testing.T, mode, parent, name, message string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	exe, _ := os.Executable()
	cmd := exec.Command(exe, name, message, out)
	cmd.Env = append(os.Environ(), spawnHelperEnv+"="+mode, "DIAGRELAY_PARENT="+parent)
	// The helper's stdin ends when the helper has exited and been waited
	// for: a process it started and left behind (mode "orphan") has been
	// re-parented by then.
	stdin, ended, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = stdin
	err = cmd.Run()
	stdin.Close()
	ended.Close()
	if err != nil {
		t.Fatalf("the spawned helper: %v", err)
	}
	var b []byte
	testutil.Eventually(t, replyTimeout, "the spawned helper's output", func() bool {
		var err error
		b, err = os.ReadFile(out)
		return err == nil
	})
	return string(b)
}

// spawnStatus is what these tests read of thread.status.
type spawnStatus struct {
	Open        bool `json:"open"`
	Diagnostics []struct {
		Message string `json:"message"`
	} `json:"diagnostics"`
	Peer *struct {
		PID int `json:"pid"`
	} `json:"peer"`
	Exited *time.Time `json:"exited"`
}

// A process started below the host, with only DIAGRELAY_PARENT, opens its
// own thread, bound to it, and its report reaches the parent's mailbox;
// when it exits its thread is closed (status readable) and its place is
// free. A process re-parented away from the host is refused.
func TestServeSpawnToken(t *testing.T) {
	s := startServer(t, "", "", "--max-nested", "1")
	parent := spawnToken(t, s, "/root")
	if got := runSpawned(t, "child", parent, "kid", "from a spawned child"); got != "ok /root/kid" {
		t.Fatalf("the descendant: %s", got)
	}
	var page wire.Page
	if err := s.host.callInto(wire.MethodMailboxRead, wire.ReadParams{Recipient: "/root"}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 1 || page.Messages[0].From != "/root/kid" || page.Messages[0].Message != "from a spawned child" {
		t.Fatalf("/root's mailbox: %+v", page)
	}
	var st spawnStatus
	testutil.Eventually(t, replyTimeout, "/root/kid closed after its process exited", func() bool {
		if err := s.host.callInto(wire.MethodThreadStatus, wire.PathParams{Path: "/root/kid"}, &st); err != nil {
			t.Fatal(err)
		}
		return !st.Open
	})
	if st.Exited == nil || st.Peer == nil || st.Peer.PID <= 0 || len(st.Diagnostics) != 1 {
		t.Fatalf("/root/kid after its process exited: %+v", st)
	}
	// --max-nested 1: the exit made room for the next child.
	if got := runSpawned(t, "child", parent, "kid2", "second"); got != "ok /root/kid2" {
		t.Fatalf("the second descendant: %s", got)
	}

	got := runSpawned(t, "orphan", parent, "stranger", "not below")
	if !strings.HasPrefix(got, "error -32001 spawn.open: this spawn token is for the processes below") {
		t.Fatalf("a process outside the host's tree: %s", got)
	}
	if !s.waitStderr("refused a spawn.open") {
		t.Fatal("the refusal was not logged")
	}
	if err := s.host.callInto(wire.MethodThreadStatus, wire.PathParams{Path: "/root/stranger"}, &st); err == nil {
		t.Fatalf("the refused open opened /root/stranger: %+v", st)
	}
}

// spawnOpen calls spawn.open on a new connection of the test process (the
// host's process itself, so inside its tree).
func spawnOpen(t *testing.T, s *server, token, path string) (wire.OpenResult, error) {
	t.Helper()
	c := s.dial("")
	var res wire.OpenResult
	err := c.callInto(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: token, Path: path}, &res)
	return res, err
}

// What a spawn token opens: threads strictly below its path, not open now,
// at most --max-nested (64) of them live; and it is refused to a child
// and on a token it does not know.
func TestServeSpawnTokenScope(t *testing.T) {
	s := startServer(t, "", "")
	var p parentEnv
	json.Unmarshal([]byte(spawnToken(t, s, "/root")), &p)
	for _, path := range []string{"/root", "/rooty/a", "/other/a"} {
		_, err := spawnOpen(t, s, p.Token, path)
		wantRPCError(t, "spawn.open "+path, err, wire.CodeForbidden, "opens threads only below /root")
	}
	s.open("/root/hosts")
	_, err := spawnOpen(t, s, p.Token, "/root/hosts")
	wantRPCError(t, "spawn.open of an open thread", err, wire.CodeForbidden, "is open")
	_, err = spawnOpen(t, s, strings.Repeat("0", 64), "/root/a")
	wantRPCError(t, "an unknown spawn token", err, wire.CodeUnauthenticated, "unknown spawn token")
	_, err = spawnOpen(t, s, "", "/root/a")
	wantRPCError(t, "no token", err, wire.CodeInvalidParams, `"token"`)

	for i := range 64 {
		res, err := spawnOpen(t, s, p.Token, fmt.Sprintf("/root/s%d", i))
		if err != nil {
			t.Fatalf("spawn.open %d: %v", i, err)
		}
		if i == 0 {
			// The thread is bound to the process that opened it: its
			// hello from here (that process) is admitted.
			c := s.dial(res.Token)
			if _, err := c.call(wire.MethodDiagnosticProbe, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, err = spawnOpen(t, s, p.Token, "/root/s64")
	wantRPCError(t, "the 65th spawn.open", err, wire.CodeTooManyConns, "too many nested runtimes (at most 64 live below /root)")
	if _, err := s.host.call(wire.MethodRuntimeClose, wire.PathParams{Path: "/root/s3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := spawnOpen(t, s, p.Token, "/root/s64"); err != nil {
		t.Fatalf("spawn.open after a close: %v", err)
	}

	// A child may not ask for a spawn token; a new one replaces the old.
	tok, _ := s.open("/root/c")
	_, err = s.dial(tok).call(wire.MethodSpawnToken, wire.PathParams{Path: "/root/c"})
	wantRPCError(t, "a child's spawn.token", err, wire.CodeForbidden, "host method")
	spawnToken(t, s, "/root")
	_, err = spawnOpen(t, s, p.Token, "/root/late")
	wantRPCError(t, "a replaced spawn token", err, wire.CodeUnauthenticated, "unknown spawn token")
}
