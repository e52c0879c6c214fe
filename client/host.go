package client

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/diagrelay/diagrelay/internal/rpc"
)

// Host is a manager host's connection to serve's Unix socket, made with
// the host token (DIR/host.token): it opens and closes child runtimes and
// reads their threads' status. Its methods are safe for concurrent use.
// The host methods are in docs/protocol.md ("Host methods").
type Host struct {
	conn *rpc.Conn
}

// Runtime is an opened child runtime: the environment a child process
// needs is the socket and Token (see EnvSocket, EnvToken).
type Runtime struct {
	Path       string `json:"path"`
	Token      string `json:"token"`
	Generation uint64 `json:"generation"` // the thread's opens, from 1
}

// Dropped counts a thread's reports not delivered, per reason, over all
// its generations.
type Dropped struct {
	Duplicate int `json:"duplicate"`
	Rate      int `json:"rate"`
	Cap       int `json:"cap"`
	Invalid   int `json:"invalid"`
}

// Total is the sum of the four counts.
func (d Dropped) Total() int { return d.Duplicate + d.Rate + d.Cap + d.Invalid }

// Diagnostic is one delivered report in a thread's status. Its texts are
// as the service sanitized them.
type Diagnostic struct {
	Level   string    `json:"level"`
	Source  string    `json:"source"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// ThreadStatus is thread.status's result: the thread, its runtime, its 20
// newest delivered diagnostics (oldest first) and its drop counts.
type ThreadStatus struct {
	Path        string       `json:"path"`
	Parent      string       `json:"parent"`
	Owner       string       `json:"owner"`
	Open        bool         `json:"open"`
	Generation  uint64       `json:"generation"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Dropped     Dropped      `json:"dropped"`
}

// ThreadInfo is one thread in thread.list: Diagnostics is how many its
// status holds.
type ThreadInfo struct {
	Path        string  `json:"path"`
	Parent      string  `json:"parent"`
	Owner       string  `json:"owner"`
	Open        bool    `json:"open"`
	Generation  uint64  `json:"generation"`
	Diagnostics int     `json:"diagnostics"`
	Dropped     Dropped `json:"dropped"`
}

// ErrNotHostToken is returned by DialHost when the token is a child's.
var ErrNotHostToken = errors.New("session.hello: the token is a child's, not the host token")

// DialHost connects to serve's socket and says hello with the host token
// (ASCII white space around it is ignored, so the contents of host.token
// work as they are). A token the service does not know is an *Error of
// code -32001.
func DialHost(socket, token string) (*Host, error) {
	nc, err := net.DialTimeout("unix", socket, dialTimeout)
	if err != nil {
		return nil, err
	}
	h := &Host{conn: rpc.New(nc, nc, nc, rpc.Options{Timeout: replyTimeout})}
	var hello struct {
		Role string `json:"role"`
	}
	if err := call(h.conn, "session.hello", struct {
		Token string `json:"token"`
	}{strings.TrimSpace(token)}, &hello); err != nil {
		nc.Close()
		return nil, err
	}
	if hello.Role != "host" {
		nc.Close()
		return nil, ErrNotHostToken
	}
	return h, nil
}

// OpenRuntime opens a child runtime for thread path ("/root/x"). parent,
// if not "", must be path's lexical parent; owner names the creator of an
// independent root (a path not under /root). Opening an open path again
// reopens it: a new generation and token, the old token revoked.
func (h *Host) OpenRuntime(path, parent, owner string) (Runtime, error) {
	p := struct {
		Path   string `json:"path"`
		Parent string `json:"parent,omitempty"`
		Owner  string `json:"owner,omitempty"`
	}{path, parent, owner}
	var rt Runtime
	err := call(h.conn, "runtime.open", p, &rt)
	return rt, err
}

// CloseRuntime closes the thread's runtime and revokes its token; the
// thread's status stays. A path never opened is an *Error of code -32004.
func (h *Host) CloseRuntime(path string) error {
	return call(h.conn, "runtime.close", pathParams{path}, nil)
}

// Status returns the thread's status. A path never opened is an *Error of
// code -32004.
func (h *Host) Status(path string) (ThreadStatus, error) {
	var st ThreadStatus
	err := call(h.conn, "thread.status", pathParams{path}, &st)
	return st, err
}

// List returns every thread ever opened, sorted by path.
func (h *Host) List() ([]ThreadInfo, error) {
	var res struct {
		Threads []ThreadInfo `json:"threads"`
	}
	err := call(h.conn, "thread.list", nil, &res)
	return res.Threads, err
}

// Close closes the connection; the runtimes it opened stay open.
func (h *Host) Close() error { return h.conn.Close() }

type pathParams struct {
	Path string `json:"path"`
}
