//go:build !linux && !darwin

package peercred

import (
	"errors"
	"net"
)

// Other systems: no peer credentials are read. Every peer is let in (its
// token alone decides), and a token cannot be bound: runtime.open with bind
// is refused, and serve --bind-peer will not start (docs/protocol.md).

// Binding says that this system can bind a token to a process.
const Binding = false

func read(net.Conn) Cred { return Cred{} }

func Peer(net.Conn, Cred, bool) (*Proc, error) {
	return nil, errors.New("no peer credentials on this system")
}

func Lookup(int) (*Proc, error) {
	return nil, errors.New("no process table on this system")
}

func (r *Proc) Alive() bool           { return false }
func (r *Proc) WatchExit(func()) bool { return false }
func (r *Proc) Close()                {}
func ParentOf(int) (int, error)       { return 0, errors.New("no process table") }
func ExePath(int) string              { return "" }
