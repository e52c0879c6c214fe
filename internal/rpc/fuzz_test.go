package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzConn feeds any byte stream as the server's side of a connection
// while two calls are in flight: nothing panics, each call returns (a
// result, an *Error or a transport error) well before its timeout, and the
// notification queue closes when the stream ends.
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
		var sent bytes.Buffer
		c := New(bytes.NewReader(stream), &sent, nil, Options{Timeout: 5 * time.Second, KeepStrays: strays, MaxFrame: 1 << 16})
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
				var re *Error
				if err != nil && !errors.As(err, &re) && err.Error() == "" {
					t.Fatal("an error without a message")
				}
			case <-time.After(3 * time.Second):
				// The stream ended (EOF) at once, so no call may wait for
				// its timeout.
				t.Fatal("a call outlived the end of the stream")
			}
		}
		for range c.Notifications() {
		}
		if strays {
			for range c.Strays() {
			}
		}
	})
}
