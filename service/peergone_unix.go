//go:build unix

package service

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerGone reports whether the peer of nc has closed its end entirely
// (POLLHUP: both directions shut), as opposed to shutting only its write
// side, after which it may still read the replies. A departed peer's
// frames still buffered in the socket are then not worth reading.
func peerGone(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	rc.Control(func(fd uintptr) {
		fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds[:], 0); err == nil && n > 0 {
			gone = fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
		}
	})
	return gone
}
