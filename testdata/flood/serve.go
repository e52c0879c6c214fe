package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// server is one `diagrelay serve --stdio --socket` process: the harness is
// its host on stdio, as a parent session is.
type server struct {
	cmd    *exec.Cmd
	socket string
	dir    string
	in     io.WriteCloser
	out    *bufio.Reader
	next   int
	proc   proc
}

// serveStderr, if set, is the file serve's standard error is appended to
// (with GODEBUG=gctrace=1 in the environment: what its GC did).
var serveStderr string

func startServe(bin string, extra []string) (*server, error) {
	dir, err := os.MkdirTemp("", "flood-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, err
	}
	s := &server{socket: filepath.Join(dir, "s"), dir: dir}
	args := append([]string{"serve", "--stdio", "--socket", s.socket, "--data", data}, extra...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = io.Discard
	if serveStderr != "" {
		f, err := os.OpenFile(serveStderr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child has its own copy once started
		s.cmd.Stderr = f
	}
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewReaderSize(out, 1<<20)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.proc = proc{s.cmd.Process.Pid}
	for range 500 { // the socket appears once serve listens
		if c, err := net.Dial("unix", s.socket); err == nil {
			c.Close()
			return s, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("serve did not listen on %s", s.socket)
}

// call sends one host request on stdio and waits for its reply, skipping
// ui.notify notifications.
func (s *server) call(method string, params any) (json.RawMessage, error) {
	s.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var r struct {
			ID     *int
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		if json.Unmarshal(line, &r) != nil || r.ID == nil {
			continue // a notification
		}
		if *r.ID != s.next {
			return nil, fmt.Errorf("reply to %d, want %d", *r.ID, s.next)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	}
}

func (s *server) open(path string) (string, error) {
	res, err := s.call("runtime.open", map[string]string{"path": path})
	if err != nil {
		return "", err
	}
	var r struct{ Token string }
	err = json.Unmarshal(res, &r)
	return r.Token, err
}

func (s *server) stop() {
	s.in.Close() // the stdio host going away ends serve cleanly
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(s.dir)
}

// child is a well-behaved child's connection.
type child struct {
	c net.Conn
	r *bufio.Reader
}

func dialChild(socket string, timeout time.Duration) (*child, error) {
	c, err := net.DialTimeout("unix", socket, timeout)
	if err != nil {
		return nil, err
	}
	return &child{c: c, r: bufio.NewReader(c)}, nil
}

// roundTrip writes frame and reads one reply line, which must contain want.
func (ch *child) roundTrip(frame, want string, timeout time.Duration) error {
	ch.c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(ch.c, frame); err != nil {
		return err
	}
	line, err := ch.r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.Contains(line, want) {
		return fmt.Errorf("got %q, want %s", strings.TrimSpace(line), want)
	}
	return nil
}

func helloFrame(token string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", token)
}

// lineReader reads the flooder's answers.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{bufio.NewReader(r)} }

func (l *lineReader) line() string {
	s, _ := l.r.ReadString('\n')
	return strings.TrimSpace(s)
}
