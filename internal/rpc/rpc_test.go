package rpc

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// With BlockNotifications a full queue holds the reader, and so the
// replies behind it, instead of dropping; Close releases it, and the call
// waiting meanwhile fails as ErrClosed.
func TestBlockNotificationsWaitsUntilClose(t *testing.T) {
	r, w := io.Pipe()
	c := New(r, io.Discard, r, Options{Timeout: -1, BlockNotifications: true})
	go func() {
		w.Write([]byte(strings.Repeat(`{"method":"event","params":{}}`+"\n", notesBuffer+1)))
		w.Write([]byte(`{"id":1,"result":{}}` + "\n"))
	}()
	done := make(chan error, 1)
	go func() { done <- c.Call("m", nil, nil) }()
	// Wait for the queue to fill: the reader then holds the last
	// notification, and the reply behind it.
	testutil.Eventually(t, 10*time.Second, "the notification queue full", func() bool { return len(c.notes) >= notesBuffer })
	select {
	case err := <-done:
		t.Fatalf("the call returned (%v) past a full queue", err)
	default:
	}
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("call after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the reader")
	}
	n := 0
	for range c.Notifications() {
		n++
	}
	if n != notesBuffer || c.DroppedNotifications() != 0 {
		t.Fatalf("%d queued, %d dropped", n, c.DroppedNotifications())
	}
}

// Lenient skips what is not a frame and replies nobody asked for; the
// same lines end a strict connection.
func TestLenient(t *testing.T) {
	const junk = "not json\n[1,2]\n{\"id\":99,\"result\":{}}\n{\"id\":\"x\",\"result\":{}}\n"
	for _, lenient := range []bool{true, false} {
		r, w := io.Pipe()
		// The junk and the reply go out once the request is written, so
		// the reply cannot come before its call is pending.
		reply := writeFunc(func(p []byte) (int, error) {
			go w.Write([]byte(junk + `{"id":1,"result":{"ok":true}}` + "\n"))
			return len(p), nil
		})
		c := New(r, reply, r, Options{Timeout: 5 * time.Second, Lenient: lenient})
		var res struct{ OK bool }
		err := c.Call("m", nil, &res)
		if lenient && (err != nil || !res.OK) {
			t.Errorf("lenient: %v %+v", err, res)
		}
		if !lenient && !errors.Is(err, ErrClosed) {
			t.Errorf("strict: %v", err)
		}
		c.Close()
	}
}

// writeFunc is an io.Writer that calls itself.
type writeFunc func(p []byte) (int, error)

func (f writeFunc) Write(p []byte) (int, error) { return f(p) }
