package livedemo

import (
	"fmt"
	"time"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/demo"
	"github.com/diagrelay/diagrelay/internal/jsonframe"
)

// step is one thing the live demo does, at an offset from its start.
type step struct {
	at     time.Duration
	thread string
	do     string // "report" (fields below), "reopen" or "close"
	level  string
	source string
	msg    string
}

// script is what the tree (demo.Children) does, in order: well-behaved
// reports, a burst the rate window cuts, the demo's hostile reports
// (demo.HostileReports) that the service must clean, an invalid level,
// reopened threads and a closed one.
func script() []step {
	s := []step{
		{at: 500 * time.Millisecond, thread: "/root/scout", level: "warning", source: "lint", msg: "eslint not found on PATH; lint checks skipped"},
		{at: 1 * time.Second, thread: "/root/scout/lint", level: "info", source: "eslint", msg: "checked 42 files: 3 style warnings"},
		{at: 1500 * time.Millisecond, thread: "/k", level: "info", source: "indexer", msg: "index rebuilt: 1204 symbols"},
		{at: 2 * time.Second, thread: "/k/l", level: "warning", source: "cache", msg: "stale cache entry ignored: go.sum changed"},
	}
	for i := range 8 { // a burst: 5 pass the window, 3 are dropped
		s = append(s, step{at: 3*time.Second + time.Duration(i)*50*time.Millisecond, thread: "/root/noisy",
			level: "info", source: "watcher", msg: fmt.Sprintf("file changed: src/module%d.go", i+1)})
	}
	s = append(s, step{at: 3500 * time.Millisecond, thread: "/root/noisy", level: "info", source: "watcher", msg: "file changed: src/module1.go"})
	hostile := demo.HostileReports() // the in-process demo's, sent raw over the socket
	s = append(s, hostileWave(4*time.Second, hostile[0])...)
	s = append(s,
		step{at: 5 * time.Second, thread: "/root/hostile", level: "WARN", msg: "not a level: invalid"},
		step{at: 14 * time.Second, thread: "/root/noisy", level: "info", source: "watcher", msg: "file changed: src/module9.go (the window has room again)"},
	)
	// The hostile child restarts (a new generation, so a fresh gate
	// whatever the pace) and tries the second wave.
	s = append(s, step{at: 14400 * time.Millisecond, thread: "/root/hostile", do: "reopen"})
	s = append(s, hostileWave(14500*time.Millisecond, hostile[1])...)
	s = append(s,
		step{at: 16 * time.Second, thread: "/root/scout", do: "reopen"},
		step{at: 17 * time.Second, thread: "/root/scout", level: "info", source: "lint", msg: "reopened: eslint found this time"},
		step{at: 20 * time.Second, thread: "/root/scout/lint", do: "close"},
	)
	return s
}

// hostileWave sends rs from /root/hostile from at on, 100 ms apart. A
// report whose frame would pass the service's limit (the 10 MiB one) is
// left out: over a socket it is a refused frame, not a report to show.
func hostileWave(at time.Duration, rs []diag.Report) []step {
	var s []step
	for _, r := range rs {
		if len(r.Message)+len(r.Source) > jsonframe.MaxFrame/2 {
			continue
		}
		s = append(s, step{at: at, thread: "/root/hostile", level: string(r.Level), source: r.Source, msg: r.Message})
		at += 100 * time.Millisecond
	}
	return s
}
