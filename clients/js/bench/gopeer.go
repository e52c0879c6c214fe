//go:build ignore

// gopeer is the Go side of clients/js/bench/bench.js: the same reports,
// through the Go package client, so the two clients are compared in one run
// against one service. It reads one child token per line on stdin, dials
// one client.Child per token, and prints {"elapsedNs":…,"cpuNs":…,"reports":…,"errors":…}
// (cpuNs: this process's user+system time while reporting).
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
	n := flag.Int("n", 1000, "reports per child")
	inflight := flag.Int("inflight", 1, "reports in flight per child (goroutines sharing one Child)")
	flag.Parse()

	var children []*client.Child
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		tok := strings.TrimSpace(sc.Text())
		if tok == "" {
			continue
		}
		c, err := client.Dial(*socket, tok)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gopeer:", err)
			os.Exit(1)
		}
		defer c.Close()
		children = append(children, c)
	}

	var errs atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now()
	for _, c := range children {
		var next atomic.Int64
		for g := 0; g < *inflight; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1) - 1
					if i >= int64(*n) {
						return
					}
					if err := c.Report(diag.Info, fmt.Sprintf("report %d", i), "bench"); err != nil {
						errs.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	json.NewEncoder(os.Stdout).Encode(map[string]int64{
		"elapsedNs": elapsed.Nanoseconds(), "cpuNs": cpu.Nanoseconds(),
		"reports": int64(len(children) * *n), "errors": errs.Load(),
	})
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
