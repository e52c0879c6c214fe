//go:build linux

package peercred

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux: SO_PEERCRED at accept; at a hello that needs it, SO_PEERPIDFD
// (Linux 6.5+), whose pidfd becomes readable when the process exits; the
// parent chain and start times from /proc/PID/stat.

func credOf(fd int) Cred {
	u, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Cred{}
	}
	return Cred{Known: true, PID: int(u.Pid), UID: u.Uid}
}

// errNoPidfd means the kernel has no SO_PEERPIDFD (before 6.5).
var errNoPidfd = errors.New("no SO_PEERPIDFD")

// Peer returns the process at the other end of nc as the kernel
// recorded it at connect: its pidfd where the kernel gives one, and its
// start time. A peer that has already exited is an error. watch makes
// the pidfd ready for watchExit (in the runtime's poller); a Proc only
// asked whether it is alive needs none of that.
func Peer(nc net.Conn, cred Cred, watch bool) (*Proc, error) {
	ref := &Proc{PID: cred.PID}
	f, err := peerPidfd(nc, watch)
	switch {
	case errors.Is(err, errNoPidfd):
		// Identity by pid and start time (docs/protocol.md).
		st, err := readStat(cred.PID)
		if err != nil {
			return nil, err
		}
		ref.start = st.start
	case err != nil:
		return nil, err
	default:
		ref.pidfd = f // the process itself: no start time needed
	}
	if !ref.Alive() {
		ref.Close()
		return nil, errors.New("the process has exited")
	}
	return ref, nil
}

// noPidfd makes peerPidfd answer as a kernel without SO_PEERPIDFD does;
// set by the tests of that fallback only.
var noPidfd atomic.Bool

func peerPidfd(nc net.Conn, pollable bool) (*os.File, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok || noPidfd.Load() {
		return nil, errNoPidfd
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	pidfd, oerr := -1, error(nil)
	// Under ForkLock, so that no process started meanwhile inherits it.
	syscall.ForkLock.RLock()
	cerr := rc.Control(func(fd uintptr) {
		pidfd, oerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
		if oerr == nil {
			unix.CloseOnExec(pidfd)
		}
	})
	syscall.ForkLock.RUnlock()
	switch {
	case cerr != nil:
		return nil, cerr
	case errors.Is(oerr, unix.ENOPROTOOPT) || errors.Is(oerr, unix.EINVAL):
		return nil, errNoPidfd
	case oerr != nil:
		return nil, oerr // ESRCH: the peer is gone
	}
	// Non-blocking, so that os.NewFile puts it in the runtime's poller:
	// waiting for the exit then holds no thread.
	if pollable {
		if err := unix.SetNonblock(pidfd, true); err != nil {
			unix.Close(pidfd)
			return nil, err
		}
	}
	return os.NewFile(uintptr(pidfd), "pidfd"), nil
}

// alive reports whether the process has not exited: its pidfd is not
// readable, or without one, /proc shows a live process of the same start
// time under its pid.
func (r *Proc) Alive() bool {
	if r.pidfd != nil {
		rc, err := r.pidfd.SyscallConn()
		if err != nil {
			return false
		}
		exited := true
		if rc.Control(func(fd uintptr) { exited = pidfdReadable(fd) }) != nil {
			return false
		}
		return !exited
	}
	st, err := readStat(r.PID)
	return err == nil && st.start == r.start && st.state != 'Z' && st.state != 'X'
}

// pidfdReadable reports whether the pidfd's process has exited (any event
// other than none counts: POLLIN, or POLLHUP or POLLERR for a pidfd that
// no longer works).
func pidfdReadable(fd uintptr) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || (n > 0 && fds[0].Revents != 0)
	}
}

// watchExit calls exited once when the process exits, from a goroutine
// that waits in the runtime's poller (no thread held, no polling loop),
// and reports true; without a pidfd it reports false and never calls it.
// close ends the wait without calling exited.
func (r *Proc) WatchExit(exited func()) bool {
	if r.pidfd == nil {
		return false
	}
	rc, err := r.pidfd.SyscallConn()
	if err != nil {
		return false
	}
	go func() {
		// Read calls the function again each time the poller says the
		// pidfd is readable; true ends the wait.
		if rc.Read(pidfdReadable) == nil {
			exited()
		}
	}()
	return true
}

func (r *Proc) Close() {
	if r != nil && r.pidfd != nil {
		r.pidfd.Close()
	}
}

func ParentOf(pid int) (int, error) {
	st, err := readStat(pid)
	return st.ppid, err
}

// ExePath is the process's executable, as /proc/PID/exe links to it (""
// when the kernel does not let this process see it).
func ExePath(pid int) string {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return p
}

type procStat struct {
	state byte
	ppid  int
	start uint64 // field 22: clock ticks after boot
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat reads /proc/PID/stat. The command name, in parentheses, is
// the process's own choice (prctl PR_SET_NAME) and may hold ") S 1": the
// fields are read after the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("proc stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	// After the name: state(3) ppid(4) ... starttime(22).
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("proc stat: %d fields after the name", len(f))
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil || ppid < 0 {
		return procStat{}, errors.New("proc stat: bad ppid")
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, errors.New("proc stat: bad start time")
	}
	return procStat{state: f[0][0], ppid: ppid, start: start}, nil
}

// Lookup returns process pid as the service holds on to a peer's: its
// pidfd (pidfd_open, Linux 5.3+; close-on-exec always), else its start
// time. An exited process is an error. The caller makes sure pid is still
// the process it means once the Proc exists (service hostProc).
func Lookup(pid int) (*Proc, error) {
	ref := &Proc{PID: pid}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		ref.pidfd = os.NewFile(uintptr(fd), "pidfd")
	case errors.Is(err, unix.ENOSYS):
		st, err := readStat(pid)
		if err != nil {
			return nil, err
		}
		ref.start = st.start
	default:
		return nil, err
	}
	if !ref.Alive() {
		ref.Close()
		return nil, errors.New("the process has exited")
	}
	return ref, nil
}

// NoPidfd makes this process behave as on a kernel without SO_PEERPIDFD
// (before Linux 6.5), for the tests of that fallback in this package and
// in package service; it returns the function that undoes it.
func NoPidfd() (undo func()) {
	noPidfd.Store(true)
	return func() { noPidfd.Store(false) }
}
