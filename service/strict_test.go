package service_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// failingMailbox is a real Store whose Post fails with err once it is set:
// a full disk cannot be made safely in a test, so its error is.
type failingMailbox struct {
	*mailbox.Store
	err atomic.Value // error
}

func (f *failingMailbox) Post(m diag.ParentMessage) error {
	if err, _ := f.err.Load().(error); err != nil {
		return err
	}
	return f.Store.Post(m)
}

// strictLine checks that a reply line is valid UTF-8 JSON with no
// repeated names, as a strict client would decode it.
func strictLine(t testing.TB, line []byte) {
	t.Helper()
	if !utf8.Valid(line) {
		t.Fatalf("reply is not valid UTF-8: %q", line)
	}
	if !jsontext.Value(bytes.TrimSpace(line)).IsValid() { // RFC 8259, no repeated names
		t.Fatalf("reply is not strict JSON: %q", line)
	}
}

// rawExchange sends frame on c and returns the next reply line.
func rawExchange(t testing.TB, c net.Conn, r *bufio.Reader, frame string) string {
	t.Helper()
	if _, err := c.Write([]byte(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("after %q: %v", frame, err)
	}
	strictLine(t, line)
	return string(line)
}

// memberFrame is a report whose params hold objects objects of n members
// each (level and message first), distinct messages so the gate admits.
func memberFrame(id, n, objects int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"info","message":"members %d %d"`, id, n, objects)
	for k := 2; k < n; k++ {
		fmt.Fprintf(&b, `,"m%d":0`, k)
	}
	for o := 1; o < objects; o++ {
		fmt.Fprintf(&b, `,"o%d":{`, o)
		for k := range n {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"m%d":0`, k)
		}
		b.WriteByte('}')
	}
	b.WriteString("}}")
	return b.String()
}

// Frames are strict: UTF-8 only, names matched exactly, duplicates refused,
// nesting bounded, ids checked, batches refused once. Every reply is valid
// UTF-8 JSON and the connection stays usable.
func TestStrictFrames(t *testing.T) {
	e := start(t, relay.ModeRPC)
	token := e.open("/root/s")
	c := rawDial(t, e.socket)
	r := bufio.NewReader(c)
	rawExchange(t, c, r, fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`, token))
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deep := func(n int) string { // the request is level 1, params level 2
		return `{"jsonrpc":"2.0","id":5,"method":"diagnostic.report","params":{"level":"info","message":"deep","x":` + nest(n-2) + `}}`
	}
	cases := []struct {
		name, frame, want string
	}{
		{"invalid UTF-8 in the id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"diagnostic.probe\"}",
			`"id":null,"error":{"code":-32700,"message":"invalid UTF-8`},
		{"invalid UTF-8 in params", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"diagnostic.report\",\"params\":{\"level\":\"info\",\"message\":\"\xc0\"}}",
			`"code":-32700`},
		{"METHOD", `{"jsonrpc":"2.0","id":1,"METHOD":"diagnostic.probe"}`, `"id":1,"error":{"code":-32600,"message":"unknown member \"METHOD\"`},
		// Without "id" it is a notification: no reply, whatever is wrong.
		{"ID", `{"jsonrpc":"2.0","ID":1,"method":"diagnostic.probe"}`, ""},
		{"notification with a repeated name", `{"jsonrpc":"2.0","method":"diagnostic.probe","method":"diagnostic.probe"}`, ""},
		{"notification with a repeated name in params", `{"jsonrpc":"2.0","method":"diagnostic.report","params":{"level":"info","level":"info"}}`, ""},
		{"notification with an unknown params member", `{"jsonrpc":"2.0","method":"diagnostic.probe","params":{"x":1}}`, ""},
		{"no id and no method is no request", `{"jsonrpc":"2.0","METHOD":"diagnostic.probe"}`, `"id":null,"error":{"code":-32600`},
		{"form feed around the object", "\f" + `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}`, `"id":null,"error":{"code":-32700`},
		{"vertical tab after the object", `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}` + "\v", `"code":-32700`},
		{"NBSP around the object", "\u00a0" + `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}`, `"code":-32700`},
		{"NEL after the object", `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}` + "\u0085", `"code":-32700`},
		{"U+3000 around the object", "\u3000" + `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}`, `"code":-32700`},
		{"U+2028 after the object", `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}` + "\u2028", `"code":-32700`},
		{"RFC 8259 whitespace around the object", " \t\r" + `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}` + " \t", `"id":1,"result"`},
		{"probe refuses an unknown params member", `{"jsonrpc":"2.0","id":6,"method":"diagnostic.probe","params":{"x":1}}`,
			`"id":6,"error":{"code":-32602,"message":"params: unknown member \"x\"`},
		{"probe refuses non-object params", `{"jsonrpc":"2.0","id":6,"method":"diagnostic.probe","params":[]}`, `"id":6,"error":{"code":-32602`},
		{"report ignores an unknown params member", `{"jsonrpc":"2.0","id":7,"method":"diagnostic.report","params":{"level":"info","message":"extra","x":{"y":[1]}}}`, `"id":7,"result":{}`},
		{"64 members in params", memberFrame(8, 64, 1), `"id":8,"result":{}`},
		{"65 members in params", memberFrame(8, 65, 1), `"id":null,"error":{"code":-32602,"message":"params: too many members: at most 64 in an object and 256 in a frame"`},
		{"257 members in a frame", memberFrame(8, 40, 7), `"id":null,"error":{"code":-32602,"message":"params: too many members`},
		{"65 members in the request", `{"jsonrpc":"2.0","id":9,"method":"diagnostic.probe"` + strings.Repeat(`,"x":1`, 62) + `}`,
			`"id":null,"error":{"code":-32600,"message":"too many members: at most 64 in an object and 256 in a frame"`},
		{"PATH in params", `{"jsonrpc":"2.0","id":2,"method":"diagnostic.report","params":{"LEVEL":"info","message":"m"}}`, `"id":2,"error":{"code":-32602,"message":"params: field \"level\" is required`},
		{"duplicate method", `{"jsonrpc":"2.0","id":3,"method":"runtime.open","method":"diagnostic.probe"}`,
			`"id":null,"error":{"code":-32600,"message":"member \"method\" appears twice`},
		{"duplicate id", `{"jsonrpc":"2.0","id":3,"id":4,"method":"diagnostic.probe"}`, `"id":null,"error":{"code":-32600`},
		{"duplicate in params", `{"jsonrpc":"2.0","id":4,"method":"diagnostic.report","params":{"level":"info","message":"a","message":"b"}}`,
			`"id":4,"error":{"code":-32602,"message":"params: member \"message\" appears twice`},
		{"duplicate deep in params", `{"jsonrpc":"2.0","id":4,"method":"diagnostic.probe","params":{"x":[{"a":1,"a":2}]}}`, `"code":-32602`},
		{"nesting 65", deep(65), `"id":null,"error":{"code":-32600,"message":"nesting too deep`},
		{"nesting 11000", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":" + nest(11000) + "}", `"code":-32600,"message":"nesting too deep`},
		{"nesting 64 is fine", deep(64), `"id":5,"result"`},
		{"id of 257 bytes", fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"diagnostic.probe"}`, strings.Repeat("a", 257)), `"id":null,"error":{"code":-32600,"message":"\"id\" must be`},
		{"id of 256 bytes", fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"diagnostic.probe"}`, strings.Repeat("a", 256)), `"result"`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"diagnostic.probe"}`, `"id":null,"error":{"code":-32600`},
		{"huge integer id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"diagnostic.probe"}`, `"id":null,"error":{"code":-32600`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"diagnostic.probe"}`, `"id":null,"error":{"code":-32600`},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"diagnostic.probe"}`, `"id":null,"error":{"code":-32600`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"diagnostic.probe"}`, `"id":null,"result"`},
		{"negative id", `{"jsonrpc":"2.0","id":-7,"method":"diagnostic.probe"}`, `"id":-7,"result"`},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"} {}`, `"code":-32700`},
		// Names and strings count as what they say once unescaped.
		{"escaped names and values", `{"jsonrp\u0063":"2.\u0030","\u0069d":11,"method":"diagnostic.pro\u0062e"}`, `"id":11,"result"`},
		{"escaped repeat of a name", `{"jsonrpc":"2.0","id":13,"\u006dethod":"diagnostic.probe","method":"diagnostic.probe"}`,
			`"id":null,"error":{"code":-32600,"message":"member \"method\" appears twice`},
		{"escaped repeat in params", `{"jsonrpc":"2.0","id":12,"method":"diagnostic.report","params":{"level":"info","message":"a","m\u0065ssage":"b"}}`,
			`"id":12,"error":{"code":-32602,"message":"params: member \"message\" appears twice`},
		{"escaped method", `{"jsonrpc":"2.0","id":14,"method":"diagnostic.repor\u0074","params":{"level":"info","message":"escaped"}}`, `"id":14,"result":{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" { // no reply: the next line answers the next request
				if _, err := c.Write([]byte(tc.frame + "\n")); err != nil {
					t.Fatal(err)
				}
				if got := rawExchange(t, c, r, `{"jsonrpc":"2.0","id":"ok","method":"diagnostic.probe"}`); !strings.Contains(got, `"id":"ok","result"`) {
					t.Fatalf("a reply to a notification, or none to the next request: %s", got)
				}
				return
			}
			got := rawExchange(t, c, r, tc.frame)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("reply %s\nwant it to contain %s", got, tc.want)
			}
			if got := rawExchange(t, c, r, `{"jsonrpc":"2.0","id":"ok","method":"diagnostic.probe"}`); !strings.Contains(got, `"result"`) {
				t.Fatalf("connection unusable after: %s", got)
			}
		})
	}
	t.Run("a batch gets one reply", func(t *testing.T) {
		b := `{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}`
		got := rawExchange(t, c, r, "["+b+","+b+"]")
		if !strings.Contains(got, `"id":null,"error":{"code":-32600,"message":"batches are not supported`) {
			t.Fatalf("batch: %s", got)
		}
		got = rawExchange(t, c, r, `{"jsonrpc":"2.0","id":"next","method":"diagnostic.probe"}`)
		if !strings.Contains(got, `"id":"next"`) {
			t.Fatalf("a second reply to the batch, or none to the next request: %s", got)
		}
	})
}
