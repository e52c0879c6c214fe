package service_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/relay"
)

// BenchmarkEventsSubscriber: 64 children flood report frames (distinct
// text, so after each window's 5 every frame is a rate drop, and each
// frame raises one event). Side by side in one run: no subscriber, a
// subscriber that reads every event, and one that never reads. frames/s
// is the children's throughput; events/s what the reading subscriber got.
func BenchmarkEventsSubscriber(b *testing.B) {
	for _, mode := range []string{"none", "reading", "stalled"} {
		b.Run("subscriber="+mode, func(b *testing.B) { benchEvents(b, mode) })
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchEvents(b *testing.B, mode string) {
	e := start(b, relay.ModeRPC)
	var received, lost atomic.Int64
	var readDone sync.WaitGroup
	if mode != "none" {
		nc, err := net.Dial("unix", e.socket)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		br := bufio.NewReaderSize(nc, 64<<10)
		// events.subscribe takes no members (strict params): a token there
		// would be refused and leave the subscriber without events.
		for i, params := range []string{fmt.Sprintf(`{"token":%q}`, hostToken), `{}`} {
			m := []string{"session.hello", "events.subscribe"}[i]
			fmt.Fprintf(nc, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", i, m, params)
			line, err := br.ReadSlice('\n')
			if err != nil || !bytes.Contains(line, []byte(`"result"`)) {
				b.Fatalf("%s: %q %v", m, line, err)
			}
		}
		if mode == "reading" {
			readDone.Add(1)
			go func() {
				defer readDone.Done()
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					var n struct { // the two members the count needs: a reader this lean keeps up
						Method string
						Params struct {
							Kind  string
							Count int64
						}
					}
					if json.Unmarshal(line, &n) != nil || n.Method != "event" {
						continue
					}
					if n.Params.Kind == "lost" {
						lost.Add(n.Params.Count)
					} else {
						received.Add(1)
					}
				}
			}()
			defer func() { nc.Close(); readDone.Wait() }()
		}
	}
	const children = 64
	cs := dialN(b, e, children)
	for i, c := range cs {
		hello(b, c, e.open(fmt.Sprintf("/root/c%d", i)))
	}
	per := b.N/children + 1
	frames := floodFrames(children, per)
	received.Store(0)
	b.ResetTimer()
	cpu0 := cpuTime()
	t0 := time.Now()
	pumpAll(b, cs, frames)
	elapsed := time.Since(t0)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	// CPU time (user+system, the whole process: server and the children's
	// pumps alike) is less disturbed by other processes than throughput.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(children*per), "cpu-ns/frame")
	b.ReportMetric(float64(children*per)/elapsed.Seconds(), "frames/s")
	if mode == "reading" {
		b.ReportMetric(float64(received.Load())/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(lost.Load())/float64(children*per), "lost/frame")
	}
}
