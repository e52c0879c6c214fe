package client

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// dialSocket connects to the service's Unix socket within dialTimeout. A
// Unix connect to a listener whose queue is full fails at once with
// EAGAIN (no SYN is retried, as with TCP): under connect churn a new
// child would be refused while the service is only busy, so it tries
// again, 1 ms after the first refusal and then twice as long each time
// (at most 5 ms: a refused connect costs one system call, and a queue kept full by churn has room only for moments), until the bound (docs/clients.md, "Connecting").
func dialSocket(socket string) (net.Conn, error) {
	return dialSocketWithin(socket, dialTimeout)
}

func dialSocketWithin(socket string, bound time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(bound)
	pause := time.Millisecond
	for {
		nc, err := net.DialTimeout("unix", socket, time.Until(deadline))
		if err == nil || !errors.Is(err, syscall.EAGAIN) {
			return nc, err
		}
		if time.Until(deadline) < pause {
			return nil, err
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}
