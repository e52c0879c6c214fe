package service_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/service"
)

// lastProbe follows every fuzzed stream: its reply proves the connection
// is still usable after whatever came before.
const lastProbe = `{"jsonrpc":"2.0","id":"fuzz-last","method":"capabilities.probe"}`

// FuzzHostStream feeds any byte stream to a host connection, then one good
// request; the replies go to a buffer or to a pipe. Invariants: the server never panics or hangs; every frame it
// writes is valid UTF-8, strict JSON (RFC 8259, no repeated names) on a
// line of its own, and one JSON-RPC 2.0 response or ui.notify
// notification; and the last frame is the good request's result.
func FuzzHostStream(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"capabilities.probe"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"runtime.open","params":{"path":"/root/x"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"thread.status","params":{"path":"/root/x"}}` + "\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"x\"}\n\n\r\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"mailbox.ack","params":{"recipient":"/root","ids":[1,2,1e30]}}`))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"runtime.open","method":"capabilities.probe"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"runtime.open","params":{"path":"/root/a","path":"/root/b"}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","ID":1,"METHOD":"capabilities.probe"}` + "\n" + `[{"jsonrpc":"2.0","id":1,"method":"capabilities.probe"}]`))
	f.Add(append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":`), bytes.Repeat([]byte("["), 100)...), '\n'))
	// Notifications that are wrong, whitespace RFC 8259 does not allow,
	// and frames at and over the member limits.
	f.Add([]byte(`{"jsonrpc":"2.0","method":"capabilities.probe","method":"x"}` + "\n\f" + `{"jsonrpc":"2.0","id":2,"method":"capabilities.probe"}` + "\u00a0\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"thread.list","params":{"a":{` + strings.Repeat(`"m":0,`, 70) + `"z":0}}}` + "\n"))
	// A spawn token, and spawn.open on a peer the kernel names no process of.
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"spawn.token","params":{"path":"/root"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"spawn.open","params":{"token":"x","path":"/root/a","more":1}}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		srv := service.New(service.Config{Mailbox: mailbox.NewMemory()})
		stream := append(append(bytes.Clone(in), '\n'), lastProbe+"\n"...)
		// An odd-sized input's replies go to a pipe, as serve's stdout:
		// each written by the host's loop while the pipe has room
		// (hostTryWrite), the rest by the writer goroutine; the frames
		// must come out whole and in order either way.
		var out bytes.Buffer
		if len(in)%2 == 0 {
			if err := srv.ServeHost(bytes.NewReader(stream), &out); err != nil {
				t.Fatalf("ServeHost: %v", err)
			}
		} else {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			read := make(chan error, 1)
			go func() { _, err := out.ReadFrom(r); r.Close(); read <- err }()
			err = srv.ServeHost(bytes.NewReader(stream), w)
			w.Close()
			if rerr := <-read; err != nil || rerr != nil {
				t.Fatalf("ServeHost: %v; reading its pipe: %v", err, rerr)
			}
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 16<<20)
		var last []byte
		for sc.Scan() {
			line := sc.Bytes()
			last = bytes.Clone(line)
			if !utf8.Valid(line) || !jsontext.Value(line).IsValid() {
				t.Fatalf("output frame is not strict UTF-8 JSON: %q", line)
			}
			var frame map[string]json.RawMessage
			if err := json.Unmarshal(line, &frame); err != nil {
				t.Fatalf("output frame is not a JSON object: %q", line)
			}
			if string(frame["jsonrpc"]) != `"2.0"` {
				t.Fatalf("frame without jsonrpc 2.0: %s", line)
			}
			id, hasID := frame["id"]
			_, hasResult := frame["result"]
			errObj, hasError := frame["error"]
			switch {
			case !hasID && string(frame["method"]) == `"ui.notify"`:
			case !hasID:
				t.Fatalf("frame is neither a response nor ui.notify: %s", line)
			case hasResult == hasError:
				t.Fatalf("response needs exactly one of result and error: %s", line)
			case len(id) > jsonframe.MaxIDBytes*6+2:
				t.Fatalf("reply id of %d bytes", len(id))
			case hasError:
				var e wire.Error
				if json.Unmarshal(errObj, &e) != nil || e.Code == 0 || e.Message == "" {
					t.Fatalf("bad error object: %s", line)
				}
			}
		}
		var end struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(last, &end) != nil || end.ID != "fuzz-last" || end.Result == nil {
			t.Fatalf("connection unusable after the input: last frame %q", last)
		}
	})
}
