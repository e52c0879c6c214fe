package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// FuzzConn feeds any byte stream as the server's side of a connection
// while two calls are in flight, once with the options of the bool
// (KeepStrays) and once as watch's host connection (Lenient,
// BlockNotifications, no call timeout, notifications read meanwhile):
// nothing panics, each call returns (a result, a *wire.Error or a transport
// error) well before any timeout, the notification queue closes when the
// stream ends (with nothing dropped when it blocks), and a call after the
// end says ErrClosed.
func FuzzConn(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"version":"1.1.0","protocol":1}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
		`{"jsonrpc":"2.0","method":"ui.notify","params":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x"}}` + "\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"malformed JSON"}}` + "\n",
		`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n",
		`<html>` + "\n",
		`{"id":"1","result":1}` + "\n" + `{"id":1.0,"result":1}` + "\n",
		"\xff\xfe\n{\"id\":",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, stream []byte, strays bool) {
		for _, opts := range []Options{
			{Timeout: 5 * time.Second, KeepStrays: strays, MaxFrame: 1 << 16},
			{Timeout: -1, Lenient: true, BlockNotifications: true, MaxFrame: 1 << 16},
		} {
			var sent bytes.Buffer
			c := New(bytes.NewReader(stream), &sent, nil, opts)
			notes := make(chan int)
			if opts.BlockNotifications {
				// A reader that keeps up: the calls never wait for it.
				go func() {
					n := 0
					for range c.Notifications() {
						n++
					}
					notes <- n
				}()
			}
			done := make(chan error, 2)
			for range 2 {
				go func() {
					var v json.RawMessage
					done <- c.Call("m", map[string]int{"a": 1}, &v)
				}()
			}
			for range 2 {
				select {
				case err := <-done:
					var re *wire.Error
					if err != nil && !errors.As(err, &re) && err.Error() == "" {
						t.Fatal("an error without a message")
					}
				case <-time.After(3 * time.Second):
					// The stream ended (EOF) at once, so no call may wait for
					// its timeout, nor for a reader of notifications.
					t.Fatal("a call outlived the end of the stream")
				}
			}
			if opts.BlockNotifications {
				<-notes
				if c.DroppedNotifications() != 0 {
					t.Fatal("a notification dropped though the queue blocks")
				}
			} else {
				for range c.Notifications() {
				}
			}
			if strays && !opts.Lenient {
				for range c.Strays() {
				}
			}
			// The stream has ended: a new call fails at once, as ended.
			if err := c.Call("m", nil, nil); !errors.Is(err, ErrClosed) {
				t.Fatalf("a call after the end: %v", err)
			}
		}
	})
}
