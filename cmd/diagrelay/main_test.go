package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// mainEnv, set to "1", makes the test binary run as the diagrelay command
// itself, so the end-to-end tests start real processes (serve, report,
// probe) without building a separate binary.
const mainEnv = "DIAGRELAY_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Bounds on waiting for a subprocess or a reply; generous for -race on a
// busy 2-core machine, and only reached when something is broken.
const (
	replyTimeout = 10 * time.Second
	exitTimeout  = 15 * time.Second
)

// diagrelayCmd returns the test binary set up to run as `diagrelay args...`.
// The environment is the test's minus the child variables, plus extra.
func diagrelayCmd(ctx context.Context, t testing.TB, extra []string, args ...string) *exec.Cmd {
	t.Helper()
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

// shortTempDir returns a fresh directory under the system temp dir, removed
// at cleanup. t.TempDir's long names can overflow sun_path (about 100
// bytes) once a socket name is added.
func shortTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// server is `diagrelay serve --stdio --socket S --data D` running as a
// subprocess, with the test as its host on stdin/stdout.
type server struct {
	t      testing.TB
	cmd    *exec.Cmd
	data   string // --data
	socket string // --socket
	host   *rpcConn
	stdin  *os.File // the host's end of the server's stdin
	stdout *os.File // the host's end of the server's stdout
	stderr *syncBuffer

	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // valid after exited
}

// startServer starts serve on data dir data and socket path socket (both
// created under a short temp dir when ""), with extra flags, and waits
// until it answers the host: the socket listens and host.token is written
// before stdio is served.
func startServer(t testing.TB, data, socket string, extra ...string) *server {
	t.Helper()
	if data == "" || socket == "" {
		d := shortTempDir(t)
		if data == "" {
			data = filepath.Join(d, "data")
		}
		if socket == "" {
			socket = filepath.Join(d, "s")
		}
	}
	args := append([]string{"serve", "--stdio", "--socket", socket, "--data", data}, extra...)
	s := &server{t: t, data: data, socket: socket, stderr: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = diagrelayCmd(context.Background(), t, nil, args...)

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
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = inR, outW, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	s.stdin, s.stdout = inW, outR
	s.host = newRPCConn(inW, outR, multiCloser{inW, outR})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.host.Close()
		if !s.hasExited() {
			s.cmd.Process.Kill()
			<-s.exited
		}
		if t.Failed() {
			t.Logf("serve stderr:\n%s", s.stderr.String())
		}
	})
	var c struct {
		Version  string `json:"version"`
		Protocol int    `json:"protocol"`
	}
	if err := s.host.callInto("capabilities.probe", nil, &c); err != nil {
		t.Fatalf("serve did not answer the host: %v\nstderr:\n%s", err, s.stderr.String())
	}
	return s
}

func (s *server) hasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// wait waits for the process to end and returns its exit code, or -1 and
// the signal that killed it.
func (s *server) wait() (int, syscall.Signal) {
	s.t.Helper()
	select {
	case <-s.exited:
	case <-time.After(exitTimeout):
		s.t.Fatalf("serve did not exit within %v; stderr:\n%s", exitTimeout, s.stderr.String())
	}
	ws := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// stop sends sig (SIGTERM or SIGINT) and checks the clean exit: status 0
// and the socket file removed.
func (s *server) stop(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
	if code, killed := s.wait(); code != 0 {
		s.t.Fatalf("after %v serve exited with %d (signal %v); stderr:\n%s", sig, code, killed, s.stderr.String())
	}
	if _, err := os.Lstat(s.socket); !errors.Is(err, os.ErrNotExist) {
		s.t.Errorf("socket %s still there after a clean exit: %v", s.socket, err)
	}
}

// kill sends SIGKILL; wait then reaps the process.
func (s *server) kill() { s.cmd.Process.Kill() }

// open opens (or reopens) a child runtime through the stdio host and
// returns its token and generation.
func (s *server) open(path string, params ...string) (string, uint64) {
	s.t.Helper()
	tok, gen, err := openRuntime(s.host, path, params...)
	if err != nil {
		s.t.Fatalf("runtime.open %s: %v", path, err)
	}
	return tok, gen
}

// openRuntime calls runtime.open on a host connection. params are extra
// key, value pairs (parent, owner).
func openRuntime(host *rpcConn, path string, params ...string) (string, uint64, error) {
	p := map[string]string{"path": path}
	for i := 0; i+1 < len(params); i += 2 {
		p[params[i]] = params[i+1]
	}
	var res struct {
		Path       string `json:"path"`
		Token      string `json:"token"`
		Generation uint64 `json:"generation"`
	}
	if err := host.callInto("runtime.open", p, &res); err != nil {
		return "", 0, err
	}
	if res.Path != path || len(res.Token) != 64 || res.Generation < 1 {
		return "", 0, fmt.Errorf("runtime.open gave %+v", res)
	}
	return res.Token, res.Generation, nil
}

// childEnv is the environment of a child process holding token.
func (s *server) childEnv(token string) []string {
	return []string{envSocket + "=" + s.socket, envToken + "=" + token}
}

// dial connects to the socket and, if token is not "", says hello with it.
func (s *server) dial(token string) *rpcConn {
	s.t.Helper()
	c, err := dialSocket(s.socket, token)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// dialSocket connects to a serve socket and says hello with token unless
// it is "".
func dialSocket(socket, token string) (*rpcConn, error) {
	nc, err := net.DialTimeout("unix", socket, replyTimeout)
	if err != nil {
		return nil, err
	}
	c := newRPCConn(nc, nc, nc)
	if token != "" {
		if _, err := c.call("session.hello", map[string]string{"token": token}); err != nil {
			c.Close()
			return nil, fmt.Errorf("session.hello: %w", err)
		}
	}
	return c, nil
}

// readHostToken returns the token in DIR/host.token.
func (s *server) readHostToken() string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.data, hostTokenFile))
	if err != nil {
		s.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// rpcConn is a JSON-RPC 2.0 client over one line-delimited stream. Calls
// may be made from many goroutines; a reader goroutine matches replies to
// calls by id and queues the server's notifications, reading continuously
// as a real peer must (the server drops notifications for a peer that does
// not read).
type rpcConn struct {
	w      io.Writer
	closer io.Closer

	wmu sync.Mutex // one frame at a time on w

	mu      sync.Mutex
	nextID  int
	pending map[int]chan rpcReply
	done    bool  // the reader has stopped
	readErr error // why

	notes  chan rpcNote  // ui.notify and other notifications, in order
	others chan rpcReply // replies to raw frames, and those with a null id
}

// rpcReply is a reply: Err is a JSON-RPC error or a transport failure.
type rpcReply struct {
	ID     json.RawMessage
	Result json.RawMessage
	Err    error
}

// rpcNote is a notification from the server.
type rpcNote struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func newRPCConn(w io.Writer, r io.Reader, c io.Closer) *rpcConn {
	rc := &rpcConn{w: w, closer: c, pending: make(map[int]chan rpcReply), notes: make(chan rpcNote, 4096), others: make(chan rpcReply, 64)}
	go rc.read(r)
	return rc
}

func (rc *rpcConn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var line []byte
		line, err = br.ReadBytes('\n')
		if err != nil {
			break
		}
		var f struct {
			ID     json.RawMessage `json:"id"` // "null" when null, empty when absent
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *rpcErr         `json:"error"`
		}
		if err = json.Unmarshal(line, &f); err != nil {
			err = fmt.Errorf("unparsable frame %q: %w", line, err)
			break
		}
		if len(f.ID) == 0 {
			select {
			case rc.notes <- rpcNote{Method: f.Method, Params: f.Params}:
			default: // a test that ignores notifications must not stall replies
			}
			continue
		}
		rep := rpcReply{ID: f.ID, Result: f.Result}
		if f.Error != nil {
			rep.Err = f.Error
		}
		var ch chan rpcReply
		var id int
		if json.Unmarshal(f.ID, &id) == nil && string(f.ID) != "null" {
			rc.mu.Lock()
			ch = rc.pending[id]
			delete(rc.pending, id)
			rc.mu.Unlock()
		}
		if ch == nil { // null, or an id of a raw frame
			ch = rc.others
		}
		select {
		case ch <- rep:
		default:
			err = fmt.Errorf("unexpected reply %s", line)
		}
		if err != nil {
			break
		}
	}
	rc.mu.Lock()
	rc.done, rc.readErr = true, fmt.Errorf("connection ended: %w", err)
	for id, ch := range rc.pending {
		ch <- rpcReply{Err: rc.readErr}
		delete(rc.pending, id)
	}
	rc.mu.Unlock()
	close(rc.notes)
	close(rc.others)
}

// send writes a request and returns the channel its reply arrives on.
func (rc *rpcConn) send(method string, params any) (<-chan rpcReply, error) {
	ch := make(chan rpcReply, 1)
	rc.mu.Lock()
	if rc.done {
		rc.mu.Unlock()
		return nil, rc.readErr
	}
	rc.nextID++
	id := rc.nextID
	rc.pending[id] = ch
	rc.mu.Unlock()
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	rc.wmu.Lock()
	_, err = rc.w.Write(append(b, '\n'))
	rc.wmu.Unlock()
	if err != nil {
		rc.mu.Lock()
		delete(rc.pending, id)
		rc.mu.Unlock()
		return nil, err
	}
	return ch, nil
}

// call sends a request and waits for its reply.
func (rc *rpcConn) call(method string, params any) (json.RawMessage, error) {
	ch, err := rc.send(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case rep := <-ch:
		return rep.Result, rep.Err
	case <-time.After(replyTimeout):
		return nil, fmt.Errorf("%s: no reply within %v", method, replyTimeout)
	}
}

// callInto calls and decodes the result into v.
func (rc *rpcConn) callInto(method string, params, v any) error {
	raw, err := rc.call(method, params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: decoding %s: %w", method, raw, err)
	}
	return nil
}

// rawCall writes one raw frame (a newline is added) and waits for a reply
// whose id is not one of call's: an error reply with a null id, or the
// reply to a frame with an id of the caller's choosing (not an integer).
func (rc *rpcConn) rawCall(t testing.TB, frame string) rpcReply {
	t.Helper()
	rc.wmu.Lock()
	_, err := io.WriteString(rc.w, frame+"\n")
	rc.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case rep, ok := <-rc.others:
		if !ok {
			t.Fatalf("connection ended while waiting for the reply to %.80q", frame)
		}
		return rep
	case <-time.After(replyTimeout):
		t.Fatalf("no reply to %.80q within %v", frame, replyTimeout)
	}
	return rpcReply{}
}

func (rc *rpcConn) Close() error { return rc.closer.Close() }

// nextNote waits for the next notification.
func (rc *rpcConn) nextNote(t testing.TB) rpcNote {
	t.Helper()
	select {
	case n, ok := <-rc.notes:
		if !ok {
			t.Fatal("connection ended while waiting for a notification")
		}
		return n
	case <-time.After(replyTimeout):
		t.Fatalf("no notification within %v", replyTimeout)
	}
	return rpcNote{}
}

// pendingNotes returns the notifications already received, without waiting.
func (rc *rpcConn) pendingNotes() []rpcNote {
	var ns []rpcNote
	for {
		select {
		case n, ok := <-rc.notes:
			if !ok {
				return ns
			}
			ns = append(ns, n)
		default:
			return ns
		}
	}
}

// uiNotify decodes a ui.notify notification's params.
func uiNotifyParams(t testing.TB, n rpcNote) (thread, message, notifyType string) {
	t.Helper()
	if n.Method != "ui.notify" {
		t.Fatalf("notification %s %s, want ui.notify", n.Method, n.Params)
	}
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

// wantRPCError checks that err is a JSON-RPC error with code whose message
// contains has.
func wantRPCError(t testing.TB, what string, err error, code int, has string) {
	t.Helper()
	var re *rpcErr
	if !errors.As(err, &re) || re.Code != code || !strings.Contains(re.Message, has) {
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

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // a write happened (coalesced); made lazily
}

func (b *syncBuffer) Write(p []byte) (int, error) {
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

// waitStderr waits until the server's stderr contains want, or it exits.
func (s *server) waitStderr(want string) bool {
	s.t.Helper()
	s.stderr.mu.Lock()
	if s.stderr.changed == nil {
		s.stderr.changed = make(chan struct{}, 1)
	}
	changed := s.stderr.changed
	s.stderr.mu.Unlock()
	deadline := time.After(replyTimeout)
	for !strings.Contains(s.stderr.String(), want) {
		select {
		case <-changed:
		case <-s.exited:
			return strings.Contains(s.stderr.String(), want)
		case <-deadline:
			return false
		}
	}
	return true
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
