//go:build ignore

// gopeer is the Go side of clients/js/bench/bench.js: the same reports,
// through the Go package client, so the two clients are compared in one run
// against one service. It reads one line per child on stdin, the child's
// runtimes as path=token separated by spaces; each child, concurrently
// with the others, works through its runtimes in order: it dials a
// client.Child with the token, sends -per reports with unique messages
// (from -inflight goroutines sharing the Child), and closes it. It prints
// {"elapsedNs":…,"cpuNs":…,"reports":…,"errors":…} (cpuNs: this process's
// user+system time while reporting).
//
//	go build -o /tmp/gopeer clients/js/bench/gopeer.go
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
)

func main() {
	socket := flag.String("socket", "", "the service's socket")
	per := flag.Int("per", 5, "reports per runtime")
	inflight := flag.Int("inflight", 1, "reports in flight per runtime (goroutines sharing one Child)")
	flag.Parse()

	type runtime struct{ path, token string }
	var children [][]runtime
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rts []runtime
		for _, f := range strings.Fields(sc.Text()) {
			path, tok, _ := strings.Cut(f, "=")
			rts = append(rts, runtime{path, tok})
		}
		if len(rts) > 0 {
			children = append(children, rts)
		}
	}

	var errs, reports atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now()
	for _, rts := range children {
		wg.Go(func() {
			for _, rt := range rts {
				c, err := client.Dial(*socket, rt.token)
				if err != nil {
					fmt.Fprintln(os.Stderr, "gopeer:", err)
					errs.Add(1)
					return
				}
				var next atomic.Int64
				var inner sync.WaitGroup
				for range *inflight {
					inner.Go(func() {
						for {
							i := next.Add(1) - 1
							if i >= int64(*per) {
								return
							}
							if err := c.Report(diag.Info, fmt.Sprintf("%s report %d", rt.path, i), "bench"); err != nil {
								errs.Add(1)
							}
							reports.Add(1)
						}
					})
				}
				inner.Wait()
				c.Close()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	json.NewEncoder(os.Stdout).Encode(map[string]int64{
		"elapsedNs": elapsed.Nanoseconds(), "cpuNs": cpu.Nanoseconds(),
		"reports": reports.Load(), "errors": errs.Load(),
	})
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
