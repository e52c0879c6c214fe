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
	gone func() // counts one departed peer closed at accept
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
	return &batchAccepter{rc: rc, gone: gone}
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
			f := os.NewFile(uintptr(nfd), "")
			nc, err := net.FileConn(f) // a duplicate, registered with the poller
			f.Close()
			if err != nil {
				return
			}
			conns = append(conns, nc)
		}
	})
	return conns
}

// fdGone is peerGone on a bare descriptor.
func fdGone(fd int) bool {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds[:], 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
}
