//go:build darwin

package peercred

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

func credOf(fd int) Cred {
	x, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Cred{}
	}
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		pid = 0
	}
	return Cred{Known: true, PID: pid, UID: x.Uid}
}

func Peer(nc net.Conn, cred Cred, watch bool) (*Proc, error) {
	if cred.PID <= 0 {
		return nil, errors.New("no peer pid")
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", cred.PID)
	if err != nil {
		return nil, err
	}
	return &Proc{PID: cred.PID, start: startOf(kp)}, nil
}

func startOf(kp *unix.KinfoProc) uint64 {
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec)
}

// alive reports whether a process of the same start time still has the
// pid and is not a zombie.
func (r *Proc) Alive() bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", r.PID)
	return err == nil && int(kp.Proc.P_pid) == r.PID && startOf(kp) == r.start && kp.Proc.P_stat != 5 // SZOMB
}

// watchExit: no pidfd on macOS; the exit is the last connection closing.
func (r *Proc) WatchExit(func()) bool { return false }

func (r *Proc) Close() {}

func ParentOf(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if int(kp.Proc.P_pid) != pid {
		return 0, errors.New("no such process")
	}
	return int(kp.Eproc.Ppid), nil
}

// ExePath is the path the process was executed as (kern.procargs2: argc,
// then the executable path), "" when it cannot be read.
func ExePath(pid int) string {
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

// Lookup returns process pid by its pid and start time; the caller makes
// sure pid is still the process it means once the Proc exists.
func Lookup(pid int) (*Proc, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return nil, err
	}
	return &Proc{PID: pid, start: startOf(kp)}, nil
}
