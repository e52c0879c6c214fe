//go:build linux

package client_test

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/servetest"
)

// TestDialRetriesAFullQueue: with a real serve's listen queue full (the
// process stopped with SIGSTOP, the queue filled until the kernel refuses
// with EAGAIN, as connect churn fills it), Dial does not give up at the
// first refusal: it connects and says hello once serve accepts again,
// within its 5 s bound.
func TestDialRetriesAFullQueue(t *testing.T) {
	s := servetest.Start(t, diagrelay, "", "")
	tok, _ := s.Open("/root/q")
	if err := s.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { s.Cmd.Process.Signal(syscall.SIGCONT) }
	defer cont()
	var held []net.Conn
	for {
		c, err := net.Dial("unix", s.Socket)
		if errors.Is(err, syscall.EAGAIN) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		if len(held) > 1<<17 {
			t.Fatal("the queue never filled")
		}
	}
	for _, c := range held { // queued still: serve accepts and drops them
		c.Close()
	}
	type result struct {
		c   *client.Child
		err error
		d   time.Duration
	}
	done := make(chan result, 1)
	go func() {
		begin := time.Now()
		c, err := client.Dial(s.Socket, tok)
		done <- result{c, err, time.Since(begin)}
	}()
	const stopped = 300 * time.Millisecond
	time.Sleep(stopped)
	cont()
	r := <-done
	if r.err != nil {
		t.Fatalf("Dial with the queue full for %v: %v", stopped, r.err)
	}
	defer r.c.Close()
	t.Logf("%d connections filled the queue; Dial connected after %v", len(held), r.d.Round(time.Millisecond))
	if r.d < stopped {
		t.Errorf("Dial took %v: the queue was not full", r.d)
	}
	if err := r.c.Report(diag.Warning, "after the queue drained", ""); err != nil {
		t.Fatal(err)
	}
}
