package client

import (
	"errors"
	"strings"

	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// Host is a manager host's connection to serve's Unix socket, made with
// the host token (DIR/host.token): it opens and closes child runtimes and
// reads their threads' status. Its methods are safe for concurrent use.
// The host methods are in docs/protocol.md ("Host methods").
type Host struct {
	conn *rpc.Conn
}

// The host methods' results: the protocol's shapes (docs/protocol.md).
type (
	// Runtime is runtime.open's result, an opened child runtime: a child
	// process needs the socket and Token (see EnvSocket, EnvToken).
	// Generation counts the thread's opens from 1.
	Runtime = wire.OpenResult
	// ThreadStatus is thread.status's result: the thread, its runtime, its
	// 20 newest delivered diagnostics (oldest first; texts as the service
	// sanitized them) and its drop counts over all generations; for a
	// bound token, its Peer, when it Exited and the hellos refused.
	ThreadStatus = wire.Status
	// Diagnostic is one delivered report in a ThreadStatus.
	Diagnostic = wire.Diagnostic
	// Dropped counts a thread's reports not delivered, per reason.
	Dropped = wire.Dropped
	// ThreadInfo is one thread in thread.list: Diagnostics is how many its
	// status holds.
	ThreadInfo = wire.ThreadInfo
)

// ErrNotHostToken is returned by DialHost when the token is a child's.
var ErrNotHostToken = errors.New("session.hello: the token is a child's, not the host token")

// DialHost connects to serve's socket and says hello with the host token
// (ASCII white space around it is ignored, so the contents of host.token
// work as they are). A token the service does not know is an *Error of
// code CodeUnauthenticated.
func DialHost(socket, token string) (*Host, error) {
	nc, err := dialSocket(socket)
	if err != nil {
		return nil, err
	}
	h := &Host{conn: rpc.New(nc, nc, nc, rpc.Options{Timeout: replyTimeout})}
	var hello wire.HostHello
	if err := call(h.conn, wire.MethodHello, wire.HelloParams{Token: strings.TrimSpace(token)}, &hello); err != nil {
		nc.Close()
		return nil, err
	}
	if hello.Role != wire.RoleHost {
		nc.Close()
		return nil, ErrNotHostToken
	}
	return h, nil
}

// Open opens a child runtime for thread path ("/root/x") with runtime.open's
// options (the zero OpenOptions: none). Opening an open path again reopens
// it: a new generation and token, the old token revoked.
func (h *Host) Open(path string, o OpenOptions) (Runtime, error) {
	var rt Runtime
	err := call(h.conn, wire.MethodRuntimeOpen, openParams(path, o), &rt)
	return rt, err
}

// CloseRuntime closes the thread's runtime and revokes its token; the
// thread's status stays. A path never opened is an *Error of code
// CodeUnknownThread.
func (h *Host) CloseRuntime(path string) error {
	return call(h.conn, wire.MethodRuntimeClose, wire.PathParams{Path: path}, nil)
}

// Status returns the thread's status. A path never opened is an *Error of
// code CodeUnknownThread.
func (h *Host) Status(path string) (ThreadStatus, error) {
	var st ThreadStatus
	err := call(h.conn, wire.MethodThreadStatus, wire.PathParams{Path: path}, &st)
	return st, err
}

// List returns every thread ever opened, sorted by path.
func (h *Host) List() ([]ThreadInfo, error) {
	var res wire.Threads
	err := call(h.conn, wire.MethodThreadList, nil, &res)
	return res.Threads, err
}

// Close closes the connection; the runtimes it opened stay open.
func (h *Host) Close() error { return h.conn.Close() }
