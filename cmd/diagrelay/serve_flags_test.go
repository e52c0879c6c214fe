package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestServeFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		has  string
	}{
		{[]string{"serve", "--stdio", "--log-format", "xml"}, "xml"},
		{[]string{"serve", "--stdio", "--max-pending", "0"}, "--max-pending"},
		{[]string{"serve", "--stdio", "--max-conns-per-child", "0"}, "--max-conns-per-child"},
		{[]string{"serve", "--stdio", "--max-unsent-total", "1000"}, "--max-unsent-total"},
	} {
		wantExit(t, strings.Join(tt.args, " "), runDiagrelay(t, nil, "", tt.args...), 2, tt.has)
	}
}

// --log-format json logs one JSON object per line, and --max-conns-per-child
// bounds a child token's connections on the real binary.
func TestServeLogFormatAndConnLimit(t *testing.T) {
	s := startServer(t, "", "", "--log-format", "json", "--max-conns-per-child", "1")
	tok, _ := s.open("/root/one")
	hello := func() string {
		c, err := net.Dial("unix", s.socket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":1,"method":"session.hello","params":{"token":%q}}`+"\n", tok+"\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	if got := hello(); !strings.Contains(got, `"result"`) {
		t.Fatalf("first hello: %s", got)
	}
	if got := hello(); !strings.Contains(got, `"code":-32007`) || !strings.Contains(got, "too many connections for this runtime") {
		t.Fatalf("second hello with --max-conns-per-child 1: %s", got)
	}
	if !s.waitStderr(`"msg":"serving children"`) {
		t.Fatalf("no JSON log line:\n%s", s.stderr.String())
	}
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(s.stderr.String())), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || m["msg"] == nil || m["level"] == nil {
			t.Errorf("not a JSON log line: %q", line)
		}
	}
}
