package client

import "github.com/diagrelay/diagrelay/internal/wire"

// A child may host children of its own: open, close and read the status
// of threads strictly below its own thread (docs/protocol.md, "Nested
// children"). What it opens is closed with it when its own runtime is
// closed or reopened.

// OpenOptions are runtime.open's optional members.
type OpenOptions struct {
	// Parent, if not "", must be the path's lexical parent; Owner names
	// the creator of an independent root (a path not under /root).
	Parent, Owner string
	// Bind, if not nil, says whether the new token is bound to the first
	// process that says hello with it and that process's descendants
	// (docs/protocol.md, "Bound tokens"); nil is the service's default
	// (serve --bind-peer).
	Bind *bool
}

// Peer is a bound token's process, as ThreadStatus.Peer and
// ThreadInfo.Peer show it; ThreadStatus.Exited is when it exited, and
// PeerRefused counts the hellos its binding refused.
type Peer = wire.Peer

func openParams(path string, o OpenOptions) wire.OpenParams {
	return wire.OpenParams{Path: path, Parent: o.Parent, Owner: o.Owner, Bind: o.Bind}
}

// Open opens a child runtime at path, which must be strictly below this
// child's own thread; opening an open path again is a reopen. A path
// outside that scope is an *Error with CodeForbidden.
func (c *Child) Open(path string, o OpenOptions) (Runtime, error) {
	var rt Runtime
	err := c.call(wire.MethodRuntimeOpen, openParams(path, o), &rt)
	return rt, err
}

// CloseRuntime closes the runtime at path (strictly below this child's own
// thread) and revokes its token; its status stays readable.
func (c *Child) CloseRuntime(path string) error {
	return c.call(wire.MethodRuntimeClose, wire.PathParams{Path: path}, nil)
}

// Status returns the status of the thread at path, strictly below this
// child's own thread.
func (c *Child) Status(path string) (ThreadStatus, error) {
	var st ThreadStatus
	err := c.call(wire.MethodThreadStatus, wire.PathParams{Path: path}, &st)
	return st, err
}
