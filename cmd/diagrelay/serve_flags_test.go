package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
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
		{[]string{"serve", "--cluster", "nats://a", "--join", "nats://b"}, "not both"},
		{[]string{"serve", "--stdio", "--join", "nats://b"}, "an edge has no host"},
		{[]string{"serve", "--stdio", "--name", "e1"}, "--name names an edge"},
		{[]string{"serve", "--stdio", "--nats-monitor", "http://x"}, "are for --cluster or --join"},
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

// serve redacts by default; --redact=off warns at start and passes the
// token; a bad value is a usage error. The real binary, a real report.
func TestServeRedactFlag(t *testing.T) {
	wantExit(t, "--redact maybe", runDiagrelay(t, nil, "", "serve", "--stdio", "--redact", "maybe"), 2, "-redact: want on or off")
	tok := "ghp_" + strings.Repeat("Q2xM9zR4pW", 3) + "7vK3nT"
	for _, tt := range []struct {
		flag string
		want string
		warn bool
	}{
		{"", "/root/r: auth failed with [REDACTED:github-pat]", false},
		{"--redact=off", "/root/r: auth failed with " + tok, true},
	} {
		var extra []string
		if tt.flag != "" {
			extra = append(extra, tt.flag)
		}
		s := startServer(t, "", "", extra...)
		tokChild, _ := s.open("/root/r")
		wantExit(t, "report", runDiagrelay(t, s.childEnv(tokChild), "", "report", "--level", "error", "auth failed with "+tok), 0, "")
		if _, text, _ := uiNotifyParams(t, s.host.nextNote(t)); text != tt.want {
			t.Errorf("%s: notified %q, want %q", tt.flag, text, tt.want)
		}
		if got := s.waitStderr("redaction is off"); got != tt.warn {
			t.Errorf("%s: warning logged %v, want %v:\n%s", tt.flag, got, tt.warn, s.stderr.String())
		}
	}
}

// A token at a boundary upstream's rules miss (a prefix after "_", a token
// ended by "|") is redacted on the way to thread status, the text around
// it kept. The real binary, a real report.
func TestServeRedactsAtBoundaries(t *testing.T) {
	aws := "AKIA" + "QZ7XW2MB" + "5NRT4KJH"
	stripe := "sk_live_" + strings.Repeat("Q2xM9zR4pW", 2) + "7vK3"
	s := startServer(t, "", "")
	tok, _ := s.open("/root/b")
	for _, msg := range []string{"export KEY_" + aws + " done", "charge " + stripe + "|retry"} {
		wantExit(t, "report", runDiagrelay(t, s.childEnv(tok), "", "report", "--level", "error", msg), 0, "")
	}
	out := runDiagrelay(t, nil, "", "thread", "status", "/root/b", "--json", "--socket", s.socket, "--data", s.data)
	var st struct {
		Diagnostics []struct{ Message string }
		Redacted    map[string]int
	}
	if err := json.Unmarshal([]byte(out.stdout), &st); err != nil {
		t.Fatalf("status --json: %v (%v)", out, err)
	}
	var got []string
	for _, d := range st.Diagnostics {
		got = append(got, d.Message)
	}
	want := []string{"export KEY_[REDACTED:aws-access-token] done", "charge [REDACTED:stripe-access-token]|retry"}
	if !slices.Equal(got, want) || st.Redacted["aws-access-token"] != 1 || st.Redacted["stripe-access-token"] != 1 {
		t.Errorf("status: %q %v, want %q", got, st.Redacted, want)
	}
}
