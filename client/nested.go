package client

import "github.com/diagrelay/diagrelay/internal/wire"

// A child may host children of its own: open, close and read the status
// of threads strictly below its own thread (docs/protocol.md, "Nested
// children"). What it opens is closed with it when its own runtime is
// closed or reopened.

// OpenOptions are runtime.open's optional members.
type OpenOptions struct {
	// Bind, if not nil, says whether the new token is bound to the first
	// process that says hello with it and that process's descendants
	// (docs/protocol.md, "Bound tokens"); nil is the service's default
	// (serve --bind-peer).
	Bind *bool
}

// Runtime is an opened child runtime: its Path, the Token to give the
// child (as EnvToken) and its Generation.
type Runtime = wire.OpenResult

// Status is a thread's status: its diagnostics and drop counts, and for a
// bound token its Peer (pid, uid, executable), when it Exited, and the
// hellos refused (PeerRefused).
type Status = wire.Status

// Peer is a bound token's process, as Status shows it.
type Peer = wire.Peer

// Open opens a child runtime at path, which must be strictly below this
// child's own thread; opening an open path again is a reopen. A path
// outside that scope is an *Error with CodeForbidden.
func (c *Child) Open(path string, o OpenOptions) (Runtime, error) {
	var r Runtime
	err := c.call(wire.MethodRuntimeOpen, wire.OpenParams{Path: path, Bind: o.Bind}, &r)
	return r, err
}

// CloseRuntime closes the runtime at path (strictly below this child's own
// thread) and revokes its token; its status stays readable.
func (c *Child) CloseRuntime(path string) error {
	return c.call(wire.MethodRuntimeClose, wire.PathParams{Path: path}, nil)
}

// Status returns the status of the thread at path, strictly below this
// child's own thread.
func (c *Child) Status(path string) (Status, error) {
	var st Status
	err := c.call(wire.MethodThreadStatus, wire.PathParams{Path: path}, &st)
	return st, err
}
