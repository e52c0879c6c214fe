package service_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/service"
)

// FuzzHostStream feeds any byte stream to a host connection. Invariants:
// the server never panics or hangs, and every frame it writes is one valid
// JSON-RPC 2.0 response or ui.notify notification on a line of its own.
func FuzzHostStream(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"capabilities.probe"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"runtime.open","params":{"path":"/root/x"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"thread.status","params":{"path":"/root/x"}}` + "\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"x\"}\n\n\r\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"mailbox.ack","params":{"recipient":"/root","ids":[1,2,1e30]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		srv := service.New(service.Config{Mailbox: mailbox.NewMemory()})
		var out bytes.Buffer
		if err := srv.ServeHost(bytes.NewReader(in), &out); err != nil {
			t.Fatalf("ServeHost: %v", err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var frame map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &frame); err != nil {
				t.Fatalf("output frame is not a JSON object: %q", sc.Bytes())
			}
			if string(frame["jsonrpc"]) != `"2.0"` {
				t.Fatalf("frame without jsonrpc 2.0: %s", sc.Bytes())
			}
			_, hasID := frame["id"]
			_, hasResult := frame["result"]
			errObj, hasError := frame["error"]
			switch {
			case !hasID && string(frame["method"]) == `"ui.notify"`:
			case !hasID:
				t.Fatalf("frame is neither a response nor ui.notify: %s", sc.Bytes())
			case hasResult == hasError:
				t.Fatalf("response needs exactly one of result and error: %s", sc.Bytes())
			case hasError:
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if json.Unmarshal(errObj, &e) != nil || e.Code == 0 || e.Message == "" {
					t.Fatalf("bad error object: %s", sc.Bytes())
				}
			}
		}
	})
}
