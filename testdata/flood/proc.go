package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc reads what the kernel says about serve: resident memory, open
// file descriptors and CPU time. Linux only (/proc).
type proc struct{ pid int }

// rssKiB is VmRSS, the resident set, in KiB.
func (p proc) rssKiB() int { return p.statusKiB("VmRSS") }

func (p proc) statusKiB(field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return 0
}

// mem is what serve holds resident, in KiB: rss in all, of which anon
// is anonymous memory (the Go heap, goroutine stacks, the runtime's own);
// the rest is file-backed pages (the binary's text and data, the
// mailbox's bbolt mmap), which the kernel may drop and read again.
type mem struct{ rss, anon int }

// memory reads /proc/PID/smaps_rollup.
func (p proc) memory() mem {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p.pid))
	var m mem
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "Rss:":
			m.rss = n
		case "Anonymous:":
			m.anon = n
		}
	}
	return m
}

// fds counts the open file descriptors.
func (p proc) fds() int {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
	if err != nil {
		return 0
	}
	return len(es)
}

// threads is the number of OS threads.
func (p proc) threads() int { return p.statusKiB("Threads") }

// cpu is user plus system time so far.
func (p proc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// Fields after the command (which may hold spaces), from field 3 on.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * (time.Second / 100) // USER_HZ is 100 on Linux
}

// sampler records serve's peak RSS and fd count every interval.
type sampler struct {
	p    proc
	mu   sync.Mutex
	rss  int
	fd   int
	stop chan struct{}
	done chan struct{}
}

func startSampler(p proc, every time.Duration) *sampler {
	s := &sampler{p: p, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			r, f := p.rssKiB(), p.fds()
			s.mu.Lock()
			s.rss, s.fd = max(s.rss, r), max(s.fd, f)
			s.mu.Unlock()
			select {
			case <-t.C:
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

// peaks stops the sampler and returns the peak RSS (KiB) and fd count.
func (s *sampler) peaks() (rssKiB, fds int) {
	close(s.stop)
	<-s.done
	return s.rss, s.fd
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// untilIdle waits, up to limit, for serve to use under 5 % of a core over
// a 200 ms window with at most baseFDs+slack descriptors open, and returns
// how long that took (the window's start) and the CPU spent meanwhile.
func untilIdle(p proc, baseFDs, slack int, limit time.Duration) (took, spent time.Duration, ok bool) {
	const window = 200 * time.Millisecond
	begin, c0 := time.Now(), p.cpu()
	for time.Since(begin) < limit {
		w0, cw := time.Now(), p.cpu()
		time.Sleep(window)
		if p.cpu()-cw <= window/20 && p.fds() <= baseFDs+slack {
			return w0.Sub(begin), cw - c0, true
		}
	}
	return time.Since(begin), p.cpu() - c0, false
}
