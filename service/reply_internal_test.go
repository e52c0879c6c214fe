package service

import (
	"encoding/json"
	"testing"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// The empty reply's fast path writes what json.Marshal writes, for every
// id it takes, and leaves the others to json.Marshal.
func TestEmptyReplyAsMarshal(t *testing.T) {
	for _, id := range []string{`1`, `-9223372036854775808`, `"a"`, `"\u0041\n"`, `null`, `"a<b&c>"`, "\"\u2028\"", `"é"`, ``} {
		var raw json.RawMessage
		if id != "" {
			raw = json.RawMessage(id)
		}
		want, err := json.Marshal(wire.Response{JSONRPC: wire.Version, ID: raw, Result: wire.Empty{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(encodeReply(raw, wire.Empty{}, nil)); got != string(want)+"\n" {
			t.Errorf("id %s: %q, want %q", id, got, want)
		}
	}
}
