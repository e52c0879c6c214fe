package testutil

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Churn is a connect churn on a Unix socket: dialers that connect and
// close as fast as they can, until the test ends.
type Churn struct {
	// Connected counts the connections made, Refused the connects a full
	// listen backlog refused with EAGAIN.
	Connected, Refused atomic.Int64
}

// StartChurn starts dialers on socket and returns once they have made 100
// connects (made or refused): the churn is under way. They stop, and are
// waited for, when the test ends.
func StartChurn(t testing.TB, socket string, dialers int) *Churn {
	t.Helper()
	ch := &Churn{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range dialers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("unix", socket)
				switch {
				case err == nil:
					c.Close()
					ch.Connected.Add(1)
				case errors.Is(err, syscall.EAGAIN):
					ch.Refused.Add(1)
				}
			}
		})
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
	Eventually(t, 5*time.Second, "the churn under way", func() bool { return ch.Connected.Load()+ch.Refused.Load() >= 100 })
	return ch
}
