package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/servetest"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// This file adapts internal/servetest, the shared harness around a real
// serve subprocess and the module's one JSON-RPC client, to this package's
// tests.

// mainEnv, set to "1", makes the test binary run as the diagrelay command
// itself, so the end-to-end tests start real processes (serve, report,
// probe) without building a separate binary.
const mainEnv = "DIAGRELAY_TEST_MAIN"

func TestMain(m *testing.M) {
	natstest.NodeMain() // a cluster node of TestClusterKillOrder, when asked
	if os.Getenv(mainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if spec := os.Getenv(rawPubEnv); spec != "" {
		os.Exit(rawPublishers(spec))
	}
	if url := os.Getenv(rawConsumerEnv); url != "" {
		os.Exit(rawConsumer(url))
	}
	if spec := os.Getenv(floorEnv); spec != "" {
		os.Exit(floorServe(spec))
	}
	code := m.Run()
	removeCostBinary()
	os.Exit(code)
}

const (
	envSocket    = client.EnvSocket
	envToken     = client.EnvToken
	replyTimeout = servetest.ReplyTimeout
	exitTimeout  = servetest.ExitTimeout
)

var shortTempDir = testutil.ShortTempDir

// diagrelayCmd returns the test binary set up to run as `diagrelay args...`.
// The environment is the test's minus the child variables, plus extra.
func diagrelayCmd(ctx context.Context, t testing.TB, extra []string, args ...string) *exec.Cmd {
	t.Helper()
	testutil.SkipSystem(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	// Under -race the runtime sleeps 1 s at exit unless told otherwise;
	// a data race in the subprocess still makes it exit 66.
	env := []string{mainEnv + "=1", "GORACE=atexit_sleep_ms=0 " + os.Getenv("GORACE")}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != envSocket && k != envToken && k != mainEnv && k != "GORACE" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, extra...)
	return cmd
}

// result is how a finished diagrelay process ended.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// runDiagrelay runs `diagrelay args...` to completion with env added to its
// environment and stdin as its input.
func runDiagrelay(t testing.TB, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	cmd := diagrelayCmd(ctx, t, env, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
	default:
		t.Fatalf("diagrelay %s: %v (stderr %q)", strings.Join(args, " "), err, stderr.String())
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// wantExit checks a result's exit code and that its stderr contains
// stderrHas.
func wantExit(t testing.TB, what string, r result, code int, stderrHas string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, stderrHas) {
		t.Errorf("%s: %v; want exit %d with stderr containing %q", what, r, code, stderrHas)
	}
}

// server is servetest.Server with this package's names.
type server struct {
	*servetest.Server
	t             testing.TB
	data, socket  string
	host          rpcConn
	stdin, stdout *os.File
	stderr        *servetest.SyncBuffer
}

// startServer starts the test binary as serve (see servetest.Start).
func startServer(t testing.TB, data, socket string, extra ...string) *server {
	t.Helper()
	command := func(args ...string) *exec.Cmd { return diagrelayCmd(context.Background(), t, nil, args...) }
	s := servetest.Start(t, command, data, socket, extra...)
	return &server{Server: s, t: t, data: s.Data, socket: s.Socket, host: rpcConn{s.Host},
		stdin: s.Stdin, stdout: s.Stdout, stderr: s.Stderr}
}

func (s *server) wait() (int, syscall.Signal)    { s.t.Helper(); return s.Wait() }
func (s *server) stop(sig syscall.Signal)        { s.t.Helper(); s.Stop(sig) }
func (s *server) kill()                          { s.Kill() }
func (s *server) childEnv(token string) []string { return s.ChildEnv(token) }
func (s *server) readHostToken() string          { s.t.Helper(); return s.HostToken() }
func (s *server) waitStderr(want string) bool    { s.t.Helper(); return s.WaitStderr(want) }
func (s *server) dial(token string) rpcConn      { s.t.Helper(); return rpcConn{s.Dial(token)} }
func (s *server) open(path string, kv ...string) (string, uint64) {
	s.t.Helper()
	return s.Open(path, kv...)
}

func openRuntime(host rpcConn, path string, kv ...string) (string, uint64, error) {
	return servetest.OpenRuntime(host.Conn, path, kv...)
}

func dialSocket(socket, token string) (rpcConn, error) {
	c, err := servetest.DialSocket(socket, token)
	return rpcConn{c}, err
}

// rpcConn gives rpc.Conn the short call forms these tests use.
type rpcConn struct{ *rpc.Conn }

func (c rpcConn) call(method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.Call(method, params, &raw)
	return raw, err
}

func (c rpcConn) callInto(method string, params, v any) error { return c.Call(method, params, v) }

func (c rpcConn) rawCall(t testing.TB, frame string) rpc.Reply {
	t.Helper()
	return servetest.RawCall(t, c.Conn, frame)
}

func (c rpcConn) nextNote(t testing.TB) rpc.Notification {
	t.Helper()
	return servetest.NextNote(t, c.Conn)
}

func (c rpcConn) pendingNotes() []rpc.Notification { return servetest.PendingNotes(c.Conn) }

var (
	uiNotifyParams = servetest.UINotify
	wantRPCError   = servetest.WantRPCError
)
