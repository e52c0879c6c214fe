//go:build unix

package service

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
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
	return rawTryWrite(rc, func(fd int, b []byte) (int, error) { return syscall.Write(fd, b) })
}

// pipeAtomic is the most a write to a pipe takes whole, without waiting,
// once poll says the pipe is writable: POSIX's least PIPE_BUF, and on
// Linux a page (a writable pipe has a free page-sized slot).
var pipeAtomic = func() int {
	if runtime.GOOS == "linux" {
		return 4096
	}
	return 512
}()

// hostTryWrite is socketTryWrite for the stdio host's replies (serve's
// stdout): a pipe or a socket that its parent made, blocking as a rule.
// To a socket it sends with MSG_DONTWAIT, which never waits whatever the
// descriptor's mode; to a pipe it writes at most pipeAtomic bytes, and
// only when a poll with no timeout says the pipe has room, so the write
// never waits either (only the writer goroutine writes the pipe
// meanwhile: conn.writing). Nil for anything else (a file, a terminal)
// and off Unix: every reply goes through the writer goroutine.
func hostTryWrite(w io.Writer) func([]byte) (int, error) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if cerr := rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) }); cerr != nil || err != nil {
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFSOCK:
		return rawTryWrite(rc, func(fd int, b []byte) (int, error) {
			return unix.SendmsgN(fd, b, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
		})
	case unix.S_IFIFO:
		return rawTryWrite(rc, func(fd int, b []byte) (int, error) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if n, err := unix.Poll(p, 0); n != 1 || err != nil || p[0].Revents&unix.POLLOUT == 0 {
				return 0, err // full, or an error or a hang-up for the writer to meet
			}
			return syscall.Write(fd, b[:min(len(b), pipeAtomic)])
		})
	}
	return nil
}

// rawTryWrite runs write once on rc's descriptor, under the descriptor's
// write lock, and maps "it would wait" (EAGAIN) to 0 and no error.
func rawTryWrite(rc syscall.RawConn, write func(fd int, b []byte) (int, error)) func([]byte) (int, error) {
	return func(b []byte) (n int, err error) {
		rerr := rc.Write(func(fd uintptr) bool {
			n, err = write(int(fd), b)
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
