package service

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// This file is what the kernel says about the process at the other end of
// a socket connection (docs/protocol.md, "Peers and authentication"), with
// the system-specific parts in peer_linux.go, peer_darwin.go and
// peer_other.go.

// peerCred is the peer's credentials as the kernel recorded them when it
// connected. known is false when the system gives none (a listener that
// is not a Unix socket, or a system without peer credentials).
type peerCred struct {
	known bool
	pid   int // 0 when the system gives no pid
	uid   uint32
}

// procRef is one process, as the service holds on to it: its pid, its
// start time where the system tells it (the process's identity when there
// is no pidfd), and on Linux 6.5+ a pidfd, which refers to the process
// itself rather than to a number the kernel may give to another one.
type procRef struct {
	pid   int
	start uint64
	pidfd *os.File // nil without SO_PEERPIDFD
}

// maxAncestry bounds the walk up the parent chain at a hello: a chain is
// at most as long as there are processes, and 4096 is far more than any
// real session's depth.
const maxAncestry = 4096

// ancestry returns the pids from pid up its parent chain (pid first),
// ending before pid 0 or at maxAncestry. It reads the system's process
// table as it is now; callers check afterwards that the processes that
// matter were alive throughout (procRef.alive), which rules out a pid
// given to another process during the walk.
func ancestry(pid int) []int {
	chain := make([]int, 0, 8)
	for p := pid; p > 0 && len(chain) < maxAncestry; {
		chain = append(chain, p)
		pp, err := parentOf(p)
		if err != nil || pp == p {
			break
		}
		p = pp
	}
	return chain
}

// descendsFrom reports whether the process of cred, whose connection's
// process is self (nil: not known), is owner or one of its descendants,
// and was so while both lived: owner and self are checked alive after the
// walk, so neither pid can have been reused by another process meanwhile.
func descendsFrom(cred peerCred, self *procRef, owner *procRef) bool {
	if !cred.known || cred.pid <= 0 || owner == nil || !owner.alive() {
		return false
	}
	found := false
	for p, n := cred.pid, 0; p > 0 && n < maxAncestry; n++ {
		if p == owner.pid {
			found = true
			break
		}
		pp, err := parentOf(p)
		if err != nil || pp == p {
			break
		}
		p = pp
	}
	return found && owner.alive() && (self == nil || self.alive())
}

// credOf reads the credentials of nc's peer; nil nc or a connection that
// is not a Unix socket gives none.
func credOf(nc net.Conn) peerCred {
	if nc == nil {
		return peerCred{}
	}
	if a := nc.LocalAddr(); a == nil || a.Network() != "unix" {
		return peerCred{}
	}
	return readCred(nc)
}

// controlFD runs f with nc's file descriptor, as the kernel calls on it
// need; an error if nc has none (not a socket of this process).
func controlFD(nc net.Conn, f func(fd int)) error {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return errors.New("not a system connection")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { f(int(fd)) })
}
