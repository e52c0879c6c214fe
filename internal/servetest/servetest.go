// Package servetest runs a real diagrelay serve for tests: a subprocess
// with the test as its host on stdio, and children dialing its Unix socket,
// all through the module's one JSON-RPC client (internal/rpc).
package servetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// Bounds on waiting for a subprocess or a reply; generous for -race on a
// busy 2-core machine, and only reached when something is broken.
const (
	ReplyTimeout = 10 * time.Second
	// StartTimeout bounds Start's wait for serve's first answer.
	StartTimeout = 45 * time.Second
	ExitTimeout  = 15 * time.Second
)

// Environment of a child process (the same names as package client's).
const (
	EnvSocket = "DIAGRELAY_SOCKET"
	EnvToken  = "DIAGRELAY_TOKEN"
)

// Command makes the command that runs `diagrelay args...`.
type Command func(args ...string) *exec.Cmd

// Server is `diagrelay serve --stdio --socket S --data D` running as a
// subprocess, with the test as its host on stdin/stdout.
type Server struct {
	T      testing.TB
	Cmd    *exec.Cmd
	Data   string // --data
	Socket string // --socket
	Host   *rpc.Conn
	Stdin  *os.File // the host's end of the server's stdin
	Stdout *os.File // the host's end of the server's stdout
	Stderr *SyncBuffer

	exited chan struct{} // closed when the process has been reaped
}

// Start starts serve with data dir data and socket path socket (both
// created under a short temp dir when ""), with extra flags, and waits
// until it answers the host: the socket listens and host.token is written
// before stdio is served.
func Start(t testing.TB, command Command, data, socket string, extra ...string) *Server {
	t.Helper()
	testutil.SkipSystem(t)
	if data == "" || socket == "" {
		d := testutil.ShortTempDir(t)
		if data == "" {
			data = filepath.Join(d, "data")
		}
		if socket == "" {
			socket = filepath.Join(d, "s")
		}
	}
	args := append([]string{"serve", "--stdio", "--socket", socket, "--data", data}, extra...)
	s := &Server{T: t, Data: data, Socket: socket, Stderr: &SyncBuffer{}, exited: make(chan struct{})}
	s.Cmd = command(args...)

	// Plain pipes rather than StdinPipe/StdoutPipe: the reader goroutine owns
	// the read end, and Wait never closes it under the reader's feet.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.Cmd.Stdin, s.Cmd.Stdout, s.Cmd.Stderr = inR, outW, s.Stderr
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	s.Stdin, s.Stdout = inW, outR
	s.Host = rpc.New(outR, inW, multiCloser{inW, outR}, connOptions)
	go func() {
		s.Cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.Host.Close()
		if !s.Exited() {
			s.Cmd.Process.Kill()
			<-s.exited
		}
		if t.Failed() {
			t.Logf("serve stderr:\n%s", s.Stderr.String())
		}
	})
	// A serve of a cluster answers once its JetStream calls settled, which
	// may take up to 30 s after a node restarted: ask again while it lives.
	deadline := time.Now().Add(StartTimeout)
	for {
		err := s.Host.Call("capabilities.probe", nil, nil)
		if err == nil {
			return s
		}
		if !strings.Contains(err.Error(), "no reply within") || s.Exited() || time.Now().After(deadline) {
			t.Fatalf("serve did not answer the host: %v\nstderr:\n%s", err, s.Stderr.String())
		}
	}
}

// connOptions are the tests' connections: replies to raw frames are kept.
var connOptions = rpc.Options{Timeout: ReplyTimeout, KeepStrays: true, MaxFrame: 4 << 20}

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// Wait waits for the process to end and returns its exit code, or -1 and
// the signal that killed it.
func (s *Server) Wait() (int, syscall.Signal) {
	s.T.Helper()
	select {
	case <-s.exited:
	case <-time.After(ExitTimeout):
		s.T.Fatalf("serve did not exit within %v; stderr:\n%s", ExitTimeout, s.Stderr.String())
	}
	ws := s.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// Stop sends sig (SIGTERM or SIGINT) and checks the clean exit: status 0
// and the socket file removed.
func (s *Server) Stop(sig syscall.Signal) {
	s.T.Helper()
	if err := s.Cmd.Process.Signal(sig); err != nil {
		s.T.Fatal(err)
	}
	if code, killed := s.Wait(); code != 0 {
		s.T.Fatalf("after %v serve exited with %d (signal %v); stderr:\n%s", sig, code, killed, s.Stderr.String())
	}
	if _, err := os.Lstat(s.Socket); !errors.Is(err, os.ErrNotExist) {
		s.T.Errorf("socket %s still there after a clean exit: %v", s.Socket, err)
	}
}

// Kill sends SIGKILL; Wait then reaps the process.
func (s *Server) Kill() { s.Cmd.Process.Kill() }

// Open opens (or reopens) a child runtime through the stdio host and
// returns its token and generation. params are extra key, value pairs
// (parent, owner).
func (s *Server) Open(path string, params ...string) (string, uint64) {
	s.T.Helper()
	tok, gen, err := OpenRuntime(s.Host, path, params...)
	if err != nil {
		s.T.Fatalf("runtime.open %s: %v", path, err)
	}
	return tok, gen
}

// OpenRuntime calls runtime.open on a host connection.
func OpenRuntime(host *rpc.Conn, path string, params ...string) (string, uint64, error) {
	p := map[string]string{"path": path}
	for i := 0; i+1 < len(params); i += 2 {
		p[params[i]] = params[i+1]
	}
	var res wire.OpenResult
	if err := host.Call(wire.MethodRuntimeOpen, p, &res); err != nil {
		return "", 0, err
	}
	if res.Path != path || len(res.Token) != 64 || res.Generation < 1 {
		return "", 0, fmt.Errorf("runtime.open gave %+v", res)
	}
	return res.Token, res.Generation, nil
}

// ChildEnv is the environment of a child process holding token.
func (s *Server) ChildEnv(token string) []string {
	return []string{EnvSocket + "=" + s.Socket, EnvToken + "=" + token}
}

// Dial connects to the socket and, if token is not "", says hello with it.
func (s *Server) Dial(token string) *rpc.Conn {
	s.T.Helper()
	c, err := DialSocket(s.Socket, token)
	if err != nil {
		s.T.Fatal(err)
	}
	s.T.Cleanup(func() { c.Close() })
	return c
}

// DialSocket connects to a serve socket and says hello with token unless
// it is "".
func DialSocket(socket, token string) (*rpc.Conn, error) {
	nc, err := net.DialTimeout("unix", socket, ReplyTimeout)
	if err != nil {
		return nil, err
	}
	c := rpc.New(nc, nc, nc, connOptions)
	if token != "" {
		if err := c.Call("session.hello", map[string]string{"token": token}, nil); err != nil {
			c.Close()
			return nil, fmt.Errorf("session.hello: %w", err)
		}
	}
	return c, nil
}

// HostToken returns the token in DIR/host.token.
func (s *Server) HostToken() string {
	s.T.Helper()
	b, err := os.ReadFile(filepath.Join(s.Data, "host.token"))
	if err != nil {
		s.T.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// WaitStderr waits until the server's stderr contains want, or it exits.
func (s *Server) WaitStderr(want string) bool {
	s.T.Helper()
	changed := s.Stderr.changes()
	deadline := time.After(ReplyTimeout)
	for !strings.Contains(s.Stderr.String(), want) {
		select {
		case <-changed:
		case <-s.exited:
			return strings.Contains(s.Stderr.String(), want)
		case <-deadline:
			return false
		}
	}
	return true
}

// RawCall writes one raw frame and waits for a reply that matches no call:
// an error with a null id, or the reply to an id of the caller's choosing
// (not an integer).
func RawCall(t testing.TB, c *rpc.Conn, frame string) rpc.Reply {
	t.Helper()
	if err := c.Write([]byte(frame)); err != nil {
		t.Fatal(err)
	}
	select {
	case rep, ok := <-c.Strays():
		if !ok {
			t.Fatalf("connection ended while waiting for the reply to %.80q", frame)
		}
		return rep
	case <-time.After(ReplyTimeout):
		t.Fatalf("no reply to %.80q within %v", frame, ReplyTimeout)
	}
	return rpc.Reply{}
}

// NextNote waits for the next notification.
func NextNote(t testing.TB, c *rpc.Conn) rpc.Notification {
	t.Helper()
	select {
	case n, ok := <-c.Notifications():
		if !ok {
			t.Fatal("connection ended while waiting for a notification")
		}
		return n
	case <-time.After(ReplyTimeout):
		t.Fatalf("no notification within %v", ReplyTimeout)
	}
	return rpc.Notification{}
}

// PendingNotes returns the notifications already received, without waiting.
func PendingNotes(c *rpc.Conn) []rpc.Notification {
	var ns []rpc.Notification
	for {
		select {
		case n, ok := <-c.Notifications():
			if !ok {
				return ns
			}
			ns = append(ns, n)
		default:
			return ns
		}
	}
}

// UINotify decodes a ui.notify notification's params.
func UINotify(t testing.TB, n rpc.Notification) (thread, message, notifyType string) {
	t.Helper()
	if n.Method != wire.NotifyUI {
		t.Fatalf("notification %s %s, want ui.notify", n.Method, n.Params)
	}
	// Not wire.UINotify: each member must be present, even when "".
	var p struct {
		Thread     *string `json:"thread"`
		Message    *string `json:"message"`
		NotifyType *string `json:"notifyType"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil || p.Thread == nil || p.Message == nil || p.NotifyType == nil {
		t.Fatalf("ui.notify params %s: want {thread, message, notifyType} (%v)", n.Params, err)
	}
	return *p.Thread, *p.Message, *p.NotifyType
}

// WantRPCError checks that err is a JSON-RPC error with code whose message
// contains has.
func WantRPCError(t testing.TB, what string, err error, code int, has string) {
	t.Helper()
	re, ok := errors.AsType[*wire.Error](err)
	if !ok || re.Code != code || !strings.Contains(re.Message, has) {
		t.Errorf("%s: error %v, want code %d containing %q", what, err, code, has)
	}
}

// multiCloser closes each of its closers.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// SyncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // a write happened (coalesced); made lazily
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{}, 1)
	}
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return b.b.Write(p)
}

func (b *SyncBuffer) changes() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{}, 1)
	}
	return b.changed
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Build builds cmd/diagrelay into dir and returns a Command that runs it,
// for tests outside package main (which re-execs its own test binary).
func Build(dir string) (Command, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "diagrelay")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/diagrelay/diagrelay/cmd/diagrelay").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }, nil
}
