package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestServeIDRange: an integer id is taken from -2^63 to 2^63-1 and echoed
// as it was sent (docs/protocol.md says so); one past either end, or a
// fraction, gets -32600 with a null id.
func TestServeIDRange(t *testing.T) {
	dir := shortTempDir(t)
	s := startServer(t, dir+"/data", dir+"/s.sock")
	c, err := net.Dial("unix", s.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, tt := range []struct {
		id   string
		echo bool
	}{
		{"0", true}, {"-1", true}, {"-0", true},
		{"9223372036854775807", true}, {"-9223372036854775808", true},
		{"9223372036854775808", false}, {"-9223372036854775809", false},
		{"18446744073709551615", false}, {"1.0", false}, {"1e3", false},
	} {
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"capabilities.probe"}`+"\n", tt.id)
		if _, err := c.Write([]byte(frame)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(replyTimeout))
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("id %s: %v", tt.id, err)
		}
		want := `"id":null,"error":{"code":-32600`
		if tt.echo {
			want = `"id":` + tt.id + `,`
		}
		if !strings.Contains(line, want) {
			t.Errorf("id %s: reply %s, want it to contain %s", tt.id, strings.TrimSpace(line), want)
		}
	}
}
