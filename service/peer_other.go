//go:build !linux && !darwin

package service

import (
	"errors"
	"net"
)

// Other systems: no peer credentials are read. Every peer is let in as
// before this edition, and a token cannot be bound: runtime.open with bind
// is refused, and serve --bind-peer will not start (docs/protocol.md).

// peerBinding says that this system can bind a token to a process.
const peerBinding = false

func readCred(net.Conn) peerCred { return peerCred{} }

func peerProc(net.Conn, peerCred, bool) (*procRef, error) {
	return nil, errors.New("no peer credentials on this system")
}

func procOf(int) (*procRef, error) {
	return nil, errors.New("no process table on this system")
}

func (r *procRef) alive() bool           { return false }
func (r *procRef) watchExit(func()) bool { return false }
func (r *procRef) close()                {}
func parentOf(int) (int, error)          { return 0, errors.New("no process table") }
func exePath(int) string                 { return "" }
