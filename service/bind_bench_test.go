//go:build linux || darwin

package service_test

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// BenchmarkAcceptHello is one connection's accept and hello, side by side:
// an unbound token (SO_PEERCRED at accept only), a bound one (its owner's
// own hello: SO_PEERPIDFD, /proc and the liveness checks), and the host
// token while a bound child lives (the walk up this process's parent
// chain), with the CPU time per op beside the wall time. The order matters: once this process owns the bound token, it
// may not be the host. Run: go test ./service -run '^$' -bench AcceptHello -count 6.
func BenchmarkAcceptHello(b *testing.B) {
	e := startConfig(b, service.Config{Mode: relay.ModeRPC, Mailbox: newStore(b), MaxConnsPerChild: 1 << 20}, nil)
	unbound := openBound(b, e, "/root/unbound", &no)
	bound := openBound(b, e, "/root/bound", &yes)
	// The host token is checked against every live bound process: one
	// that is not this one, which may not be the host once it owns bound.
	other := startHelper(b, e, "o", openBound(b, e, "/root/other", &yes), helperOptions{})
	other.expect("o hello")
	var claim sync.Once
	for _, c := range []struct{ name, token string }{{"unbound", unbound}, {"host", hostToken}, {"bound", bound}} {
		b.Run(c.name, func(b *testing.B) {
			if c.token == bound {
				claim.Do(func() { e.dial(bound) }) // this process owns it from now on
			}
			defer reportCPU(b)()
			frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"session.hello","params":{"token":%q}}`+"\n", c.token)
			for b.Loop() {
				nc, err := net.Dial("unix", e.socket)
				if err != nil {
					b.Fatal(err)
				}
				nc.SetDeadline(time.Now().Add(10 * time.Second))
				nc.Write(frame)
				line, err := bufio.NewReader(nc).ReadSlice('\n')
				if err != nil || !containsResult(line) {
					b.Fatalf("hello: %s, %v", line, err)
				}
				nc.Close()
			}
		})
	}
}

// reportCPU reports the process's CPU time (user and system, both ends of
// the socket) per op, which the machine's load distorts far less than
// wall time: call it at the start, and the returned function at the end.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func containsResult(line []byte) bool {
	for i := 0; i+8 <= len(line); i++ {
		if string(line[i:i+8]) == `"result"` {
			return true
		}
	}
	return false
}
