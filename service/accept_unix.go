//go:build unix

package service

import (
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// acceptBatch is how many connections one wake of the accept loop takes
// from the queue at most before it registers them.
const acceptBatch = 64

// batchAccepter drains a Unix listener's queue after each Accept (which
// waits for it the Go way) with the accept system call itself, up to
// acceptBatch connections at a time, and closes those whose peer has
// already left (connect churn) before Go makes a connection of them: one
// accept, one poll and one close each, instead of registering each with
// the runtime's poller too. The queue is drained as fast as peers fill it,
// so a new child waits behind fewer departed ones
// (docs/hostile-connections.md, "Connect churn").
type batchAccepter struct {
	rc   interface{ Control(func(fd uintptr)) error }
	addr net.Addr // the listener's, each connection's LocalAddr
	gone func()   // counts one departed peer closed at accept
}

func newBatchAccepter(l net.Listener, gone func()) *batchAccepter {
	ul, ok := l.(*net.UnixListener)
	if !ok {
		return nil
	}
	rc, err := ul.SyscallConn()
	if err != nil {
		return nil
	}
	return &batchAccepter{rc: rc, addr: ul.Addr(), gone: gone}
}

// drain takes what the queue holds now, without waiting: the connections
// whose peers are still there, at most acceptBatch.
func (b *batchAccepter) drain() []net.Conn {
	var conns []net.Conn
	_ = b.rc.Control(func(fd uintptr) {
		for n := 0; n < acceptBatch; n++ {
			nfd, _, err := unix.Accept4(int(fd), unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
			switch {
			case errors.Is(err, unix.EINTR), errors.Is(err, unix.ECONNABORTED):
				continue
			case err != nil: // EAGAIN: empty; anything else, Accept meets it next
				return
			}
			if fdGone(nfd) {
				unix.Close(nfd)
				b.gone()
				continue
			}
			// Non-blocking, so os.NewFile registers it with the poller.
			conns = append(conns, fileConn{File: os.NewFile(uintptr(nfd), "unix"), laddr: b.addr})
		}
	})
	return conns
}

// fileConn is a connection the drain accepted, its descriptor used as
// it is: net.FileConn would duplicate it, ask for its type and both its
// addresses and close the original, eight system calls more a connection
// than Accept makes, at every connection a busy accept loop drains. An
// *os.File of a non-blocking socket reads, writes, waits and takes
// deadlines in the runtime's poller as a net.Conn does; its errors are
// *os.PathError, which the connection's loop does not look into.
type fileConn struct {
	*os.File
	laddr net.Addr
}

func (c fileConn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr is the unnamed address of a peer that connected without
// binding a name, as Accept gives one.
func (c fileConn) RemoteAddr() net.Addr { return &net.UnixAddr{Net: "unix"} }

// fdGone is peerGone on a bare descriptor.
func fdGone(fd int) bool {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds[:], 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
}
