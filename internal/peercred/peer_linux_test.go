package peercred

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	// A process may name itself anything, ")" and fields included.
	st, err := parseStat([]byte("4242 (evil) S 1 1 1) R 777 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0 18446744073709551615\n"))
	if err != nil || st.ppid != 777 || st.state != 'R' || st.start != 123456 {
		t.Fatalf("parseStat = %+v, %v; want ppid 777, state R, start 123456", st, err)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S", "1 (x) S -1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", "1 (x) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) took it", bad)
		}
	}
	self, err := readStat(os.Getpid())
	if err != nil || self.ppid != os.Getppid() {
		t.Fatalf("readStat(self) = %+v, %v; want ppid %d", self, err, os.Getppid())
	}
}

// FuzzProcStat: any bytes are taken without panicking; what is accepted
// has a ppid of 0 or more, and nothing before the last ')' (the name a
// process chose) changes what is read.
func FuzzProcStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0\n"))
	f.Add([]byte("9 (a) S 1) Z 5 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0"))
	f.Add([]byte("((()))"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err != nil {
			return
		}
		if st.ppid < 0 {
			t.Fatalf("negative ppid %d", st.ppid)
		}
		st2, err := parseStat(append([]byte("7 (x) Z 3 3 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99) "), b...))
		if err != nil || st2 != st {
			t.Fatalf("a name before the fields changed them: %+v, %v; want %+v", st2, err, st)
		}
	})
}

// pidfdRef holds on to a running process the way a bound token's owner is
// held: a pidfd and its start time.
func pidfdRef(t testing.TB, pid int) *Proc {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	st, err := readStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return &Proc{PID: pid, start: st.start, pidfd: os.NewFile(uintptr(fd), "pidfd")}
}

// Pid reuse, made to happen: a process is held, exits and is reaped, and a
// new process is given its pid (as root, through ns_last_pid). The pidfd
// still says "exited", so neither the new process nor its descendants
// pass for the old one; without a pidfd, the start time tells them apart
// when they started at least a clock tick apart.
func TestPidReuseCannotImpersonate(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to choose the next pid through ns_last_pid")
	}
	old := exec.Command("sleep", "60")
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	pid := old.Process.Pid
	ref := pidfdRef(t, pid)
	defer ref.Close()
	noFd := &Proc{PID: pid, start: ref.start}
	if !ref.Alive() || !noFd.Alive() {
		t.Fatal("a running process is not alive")
	}
	exited := make(chan struct{})
	if !ref.WatchExit(func() { close(exited) }) {
		t.Fatal("watchExit refused a pidfd")
	}
	old.Process.Kill()
	old.Wait()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the exit of a held process was not seen")
	}
	time.Sleep(30 * time.Millisecond) // a start time at least a clock tick later

	var reused *exec.Cmd
	for try := 0; try < 100 && reused == nil; try++ {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Skipf("ns_last_pid: %v", err)
		}
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if cmd.Process.Pid == pid {
			reused = cmd
			break
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	if reused == nil {
		t.Skip("another process took the pid each time")
	}
	defer func() { reused.Process.Kill(); reused.Wait() }()
	if st, err := readStat(pid); err != nil || st.state == 'Z' {
		t.Fatalf("the new process under pid %d: %+v, %v", pid, st, err)
	}
	if ref.Alive() {
		t.Fatal("the pidfd of an exited process says alive after its pid was reused")
	}
	if noFd.Alive() {
		t.Fatal("start time did not tell the new process from the old one")
	}
	cred := Cred{Known: true, PID: pid}
	if DescendsFrom(cred, nil, ref) || DescendsFrom(cred, nil, noFd) {
		t.Fatal("the process given an exited owner's pid passed for it")
	}
	// The new process itself, held fresh, is alive and its own ancestor.
	fresh := pidfdRef(t, pid)
	defer fresh.Close()
	if !DescendsFrom(cred, nil, fresh) {
		t.Fatal("a live process is not its own")
	}
}

// BenchmarkPeerCalls is what binding adds to a connection, call by call,
// on one accepted Unix connection of this process: SO_PEERCRED (every
// accept), the hello peer's process (SO_PEERPIDFD, /proc/PID/stat, a
// poll, the close), the owner's (the same, made pollable and watched),
// and the descendant check from this process to itself and to its parent
// (one /proc read more), each with its CPU time per op. Run: go test ./service -run '^$' -bench PeerCalls.
func BenchmarkPeerCalls(b *testing.B) {
	dir := b.TempDir()
	l, err := net.Listen("unix", dir+"/s")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := net.Dial("unix", dir+"/s")
		if err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	nc, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	cred := Of(nc)
	if !cred.Known || cred.PID != os.Getpid() {
		b.Fatalf("credOf = %+v", cred)
	}
	b.Run("SO_PEERCRED", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			Of(nc)
		}
	})
	b.Run("peer-process", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			r, err := Peer(nc, cred, false)
			if err != nil || !r.Alive() {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("owner-watched", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			r, err := Peer(nc, cred, true)
			if err != nil || !r.WatchExit(func() {}) {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	owner, err := Peer(nc, cred, false)
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	b.Run("descends-self", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			if !DescendsFrom(cred, owner, owner) {
				b.Fatal("not itself")
			}
		}
	})
	parent := pidfdRef(b, os.Getppid())
	defer parent.Close()
	b.Run("descends-parent", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			if !DescendsFrom(cred, owner, parent) {
				b.Fatal("not its parent's")
			}
		}
	})
}

// cpuPerOp reports this process's CPU time (user and system) per op:
// wall time on a loaded machine counts the waits for a CPU too.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
