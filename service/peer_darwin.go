//go:build darwin

package service

import (
	"bytes"
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// macOS: LOCAL_PEERCRED (the uid) and LOCAL_PEERPID at accept; there is no
// pidfd, so a process is its pid and start time (sysctl kern.proc.pid),
// and a bound process's exit is seen when its token's last connection
// closes (docs/protocol.md).

// peerBinding says that this system can bind a token to a process.
const peerBinding = true

func readCred(nc net.Conn) peerCred {
	var cred peerCred
	controlFD(nc, func(fd int) {
		x, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return
		}
		pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		if err != nil {
			pid = 0
		}
		cred = peerCred{known: true, pid: pid, uid: x.Uid}
	})
	return cred
}

func peerProc(nc net.Conn, cred peerCred, watch bool) (*procRef, error) {
	if cred.pid <= 0 {
		return nil, errors.New("no peer pid")
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", cred.pid)
	if err != nil {
		return nil, err
	}
	return &procRef{pid: cred.pid, start: startOf(kp)}, nil
}

func startOf(kp *unix.KinfoProc) uint64 {
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec)
}

// alive reports whether a process of the same start time still has the
// pid and is not a zombie.
func (r *procRef) alive() bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", r.pid)
	return err == nil && int(kp.Proc.P_pid) == r.pid && startOf(kp) == r.start && kp.Proc.P_stat != 5 // SZOMB
}

// watchExit: no pidfd on macOS; the exit is the last connection closing.
func (r *procRef) watchExit(func()) bool { return false }

func (r *procRef) close() {}

func parentOf(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if int(kp.Proc.P_pid) != pid {
		return 0, errors.New("no such process")
	}
	return int(kp.Eproc.Ppid), nil
}

// exePath is the path the process was executed as (kern.procargs2: argc,
// then the executable path), "" when it cannot be read.
func exePath(pid int) string {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(b) < 5 {
		return ""
	}
	b = b[4:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// procOf returns process pid by its pid and start time; the caller makes
// sure pid is still the process it means once the procRef exists.
func procOf(pid int) (*procRef, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return nil, err
	}
	return &procRef{pid: pid, start: startOf(kp)}, nil
}
