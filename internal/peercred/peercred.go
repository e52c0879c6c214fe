// Package peercred is what the kernel says about the process at the other
// end of a Unix socket connection (docs/protocol.md, "Peers and
// authentication"): its credentials, a hold on the process itself (a pidfd
// on Linux 6.5+), its parent chain, and whether the peer has gone. The
// system-specific parts are in peer_linux.go, peer_darwin.go and
// peer_other.go; the service's rules about bound tokens are its own
// (service/bind.go).
package peercred

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// Cred is the peer's credentials as the kernel recorded them when it
// connected. Known is false when the system gives none (a listener that
// is not a Unix socket, or a system without peer credentials).
type Cred struct {
	Known bool
	PID   int // 0 when the system gives no pid
	UID   uint32
}

// Proc is one process, as the service holds on to it: its pid, its
// start time where the system tells it (the process's identity when there
// is no pidfd), and on Linux 6.5+ a pidfd, which refers to the process
// itself rather than to a number the kernel may give to another one.
type Proc struct {
	PID   int
	start uint64
	pidfd *os.File // nil without SO_PEERPIDFD
}

// MaxAncestry bounds the walk up the parent chain at a hello: a chain is
// at most as long as there are processes, and 4096 is far more than any
// real session's depth.
const MaxAncestry = 4096

// Ancestry returns the pids from pid up its parent chain (pid first),
// ending before pid 0 or at MaxAncestry. It reads the system's process
// table as it is now; callers check afterwards that the processes that
// matter were alive throughout (Proc.alive), which rules out a pid
// given to another process during the walk.
func Ancestry(pid int) []int {
	chain := make([]int, 0, 8)
	for p := pid; p > 0 && len(chain) < MaxAncestry; {
		chain = append(chain, p)
		pp, err := ParentOf(p)
		if err != nil || pp == p {
			break
		}
		p = pp
	}
	return chain
}

// DescendsFrom reports whether the process of cred, whose connection's
// process is self (nil: not known), is owner or one of its descendants,
// and was so while both lived: owner and self are checked alive after the
// walk, so neither pid can have been reused by another process meanwhile.
func DescendsFrom(cred Cred, self *Proc, owner *Proc) bool {
	if !cred.Known || cred.PID <= 0 || owner == nil || !owner.Alive() {
		return false
	}
	found := false
	for p, n := cred.PID, 0; p > 0 && n < MaxAncestry; n++ {
		if p == owner.PID {
			found = true
			break
		}
		pp, err := ParentOf(p)
		if err != nil || pp == p {
			break
		}
		p = pp
	}
	return found && owner.Alive() && (self == nil || self.Alive())
}

// Of reads the credentials of nc's peer; nil nc or a connection that
// is not a Unix socket gives none.
func Of(nc net.Conn) Cred {
	if nc == nil {
		return Cred{}
	}
	if a := nc.LocalAddr(); a == nil || a.Network() != "unix" {
		return Cred{}
	}
	return read(nc)
}

// ControlFD runs f with nc's file descriptor, as the kernel calls on it
// need; an error if nc has none (not a socket of this process).
func ControlFD(nc net.Conn, f func(fd int)) error {
	rc, err := rawConn(nc)
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { f(int(fd)) })
}

// rawConn is nc's descriptor, for the kernel calls on it; an error if nc
// has none (not a socket of this process).
func rawConn(nc net.Conn) (syscall.RawConn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, errors.New("not a system connection")
	}
	return sc.SyscallConn()
}
