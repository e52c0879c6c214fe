package wire_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// The encodings docs/protocol.md shows: a member that belongs to an
// event's kind is there even when "", the others are left out; optional
// params are left out when not given.
func TestEncodings(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		v    any
		want string
	}{
		{wire.Event{Kind: wire.EventOpened, Thread: "/k", At: at, Parent: wire.Ptr(""), Owner: wire.Ptr("/root"), Generation: 1},
			`{"kind":"opened","thread":"/k","at":"2026-01-02T03:04:05Z","parent":"","owner":"/root","generation":1}`},
		{wire.Event{Kind: wire.EventDelivered, Thread: "/root/x", At: at, Level: "info", Source: wire.Ptr(""), Message: wire.Ptr("m")},
			`{"kind":"delivered","thread":"/root/x","at":"2026-01-02T03:04:05Z","level":"info","source":"","message":"m"}`},
		{wire.Event{Kind: wire.EventLost, At: at, Count: 3},
			`{"kind":"lost","thread":"","at":"2026-01-02T03:04:05Z","count":3}`},
		{wire.OpenParams{Path: "/root/x"}, `{"path":"/root/x"}`},
		{wire.OpenParams{Path: "/root/x", Bind: new(bool)}, `{"path":"/root/x","bind":false}`},
		{wire.Event{Kind: wire.EventExited, Thread: "/root/x", At: at, Generation: 2, Peer: &wire.Peer{PID: 7, UID: 0, Exe: "/bin/x"}},
			`{"kind":"exited","thread":"/root/x","at":"2026-01-02T03:04:05Z","generation":2,"peer":{"pid":7,"uid":0,"exe":"/bin/x"}}`},
		{wire.ThreadInfo{Path: "/root/x", Redacted: wire.Redacted{}},
			`{"path":"/root/x","parent":"","owner":"","open":false,"generation":0,"diagnostics":0,"dropped":{"duplicate":0,"rate":0,"cap":0,"invalid":0},"redacted":{}}`},
		{wire.ReadParams{Recipient: "/root"}, `{"recipient":"/root"}`},
		{wire.ReportParams{Level: wire.Ptr("info"), Message: wire.Ptr("m")}, `{"level":"info","message":"m"}`},
		{wire.Response{JSONRPC: wire.Version, ID: json.RawMessage("null"), Error: wire.Errorf(wire.CodeRevoked, "r %d", 1)},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32003,"message":"r 1"}}`},
		{wire.Request{JSONRPC: wire.Version, ID: json.RawMessage("7"), Method: wire.MethodDiagnosticProbe},
			`{"jsonrpc":"2.0","id":7,"method":"diagnostic.probe"}`},
		{wire.Page{Messages: []wire.Message{}}, `{"messages":[]}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%T: %s (%v)\nwant %s", c.v, b, err, c.want)
		}
	}
	if got := (&wire.Error{Code: -32602, Message: "params: x"}).Error(); got != "params: x (-32602)" {
		t.Errorf("Error() = %q", got)
	}
	if wire.Str(nil) != "" || wire.Str(wire.Ptr("a")) != "a" {
		t.Error("Str")
	}
}

// diag.Dropped carries the protocol's tags (doc.go): its members are the
// dropped event's reasons, each once.
func TestDroppedMembersAreReasons(t *testing.T) {
	b, err := json.Marshal(wire.Dropped{Duplicate: 1, Rate: 2, Cap: 3, Invalid: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]uint64
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{wire.ReasonDuplicate: 1, wire.ReasonRate: 2, wire.ReasonCap: 3, wire.ReasonInvalid: 4}
	if len(got) != len(want) {
		t.Fatalf("dropped encodes as %s, want the members %v", b, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("dropped encodes as %s: member %q is %d, want %d", b, k, got[k], v)
		}
	}
}
