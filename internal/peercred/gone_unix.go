//go:build unix

package peercred

import (
	"net"

	"golang.org/x/sys/unix"
)

// Gone reports whether the peer of nc has closed its end entirely
// (POLLHUP: both directions shut), as opposed to shutting only its write
// side, after which it may still read the replies. A departed peer's
// frames still buffered in the socket are then not worth reading.
func Gone(nc net.Conn) bool {
	rc, err := rawConn(nc)
	if err != nil {
		return false
	}
	gone := false
	rc.Control(func(fd uintptr) {
		if n, hup, err := pollIn(fd); err == nil && n > 0 {
			gone = hup
		}
	})
	return gone
}

// pollIn asks, without waiting, whether fd has an event: n > 0 if so, and
// hup if the peer has closed its end entirely (POLLHUP or POLLERR).
func pollIn(fd uintptr) (n int, hup bool, err error) {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err = unix.Poll(fds[:], 0)
	return n, fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0, err
}

// WaitReadable returns what blocks until nc has bytes to read or has
// ended, holding no buffer meanwhile, and reports whether the peer is
// gone as Gone does, from the same poll; nil if nc has no descriptor.
// Each call is one poll when bytes are waiting, and otherwise one poll
// before and one after the wait, as a read would be (its EAGAIN, then the
// read).
func WaitReadable(nc net.Conn) func() (gone bool, err error) {
	rc, err := rawConn(nc)
	if err != nil {
		return nil
	}
	return func() (gone bool, err error) {
		err = rc.Read(func(fd uintptr) bool {
			n, hup, err := pollIn(fd)
			switch {
			case err != nil:
				return true // the read that follows meets the failure
			case n == 0:
				return false // nothing yet: wait for the descriptor
			}
			gone = hup
			return true
		})
		return gone, err
	}
}
