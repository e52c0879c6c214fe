package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// TestServeNewChildrenUnderChurn: while peers connect to a real serve and
// hang up as fast as they can (the flood harness's connect churn, two
// dialers, as it runs them), each of 15 new children connects and says hello within
// 1 s (the queue is the system's maximum, and client.Dial connects again
// when the kernel refuses with EAGAIN).
func TestServeNewChildrenUnderChurn(t *testing.T) {
	if testing.Short() || raceEnabled() {
		t.Skip("seconds of connect churn, timed: not under -short or -race (the race detector slows serve several times)")
	}
	dir := shortTempDir(t)
	s := startServer(t, dir+"/data", dir+"/s.sock")
	tokens := make([]string, 15)
	for i := range tokens {
		tokens[i], _ = s.open(fmt.Sprintf("/root/new%d", i))
	}
	churn := testutil.StartChurn(t, s.socket, 2)
	var slowest time.Duration
	failed := 0
	for i, tok := range tokens {
		begin := time.Now()
		c, err := client.Dial(s.socket, tok)
		d := time.Since(begin)
		slowest = max(slowest, d)
		if err != nil || d > time.Second {
			failed++
			t.Errorf("new child %d: %v after %v", i, err, d.Round(time.Millisecond))
		}
		if err == nil {
			c.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("15 new children, %d failed or over 1 s, slowest %v; the churn made %d connections, %d refused with EAGAIN",
		failed, slowest.Round(time.Millisecond), churn.Connected.Load(), churn.Refused.Load())
}
