//go:build unix

package service

import (
	"errors"
	"net"
	"syscall"
)

// socketTryWrite returns a function that writes to nc's socket what it
// takes at once, never waiting for room: one write(2) on the descriptor,
// which the net package keeps non-blocking. It returns how much was
// written; a full socket is 0 and no error. Nil if nc has no descriptor.
func socketTryWrite(nc net.Conn) func([]byte) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(b []byte) (n int, err error) {
		rerr := rc.Write(func(fd uintptr) bool {
			n, err = syscall.Write(int(fd), b)
			return true // never wait for the descriptor
		})
		if n < 0 {
			n = 0
		}
		if errors.Is(err, syscall.EAGAIN) {
			err = nil
		}
		if rerr != nil {
			return n, rerr
		}
		return n, err
	}
}
