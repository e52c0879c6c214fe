package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWatchUsage(t *testing.T) {
	wantExit(t, "--plain --json", runDiagrelay(t, nil, "", "watch", "--plain", "--json"), 2, "not both")
	wantExit(t, "an argument", runDiagrelay(t, nil, "", "watch", "extra"), 2, "unexpected argument")
	wantExit(t, "-h", runDiagrelay(t, nil, "", "watch", "-h"), 0, "usage: diagrelay watch")
	d := shortTempDir(t)
	wantExit(t, "no token", runDiagrelay(t, nil, "", "watch", "--data", d, "--socket", filepath.Join(d, "s")), 1, "host.token")
}

// TestWatchJSONPipe: without a terminal, watch --json is one JSON object
// per line: the thread list, then the events, until serve goes away.
func TestWatchJSONPipe(t *testing.T) {
	s := startServer(t, "", "")
	tok, _ := s.open("/root/a")
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	cmd := diagrelayCmd(ctx, t, nil, "watch", "--json", "--socket", s.socket, "--data", s.data)
	lines := startReading(t, cmd)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("watch ended early: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", lines.Text(), err)
		}
		return m
	}
	if m := next(); m["kind"] != "thread" || m["path"] != "/root/a" || m["open"] != true {
		t.Fatalf("first line %v", m)
	}
	child := s.dial(tok)
	if _, err := child.call("diagnostic.report", map[string]string{"level": "warning", "message": "\x1b[31mred\x1b[0m text"}); err != nil {
		t.Fatal(err)
	}
	if m := next(); m["kind"] != "delivered" || m["message"] != "red text" || m["thread"] != "/root/a" {
		t.Fatalf("event %v", m)
	}
	if m := next(); m["kind"] != "notified" || !strings.HasPrefix(m["message"].(string), "/root/a: red text") {
		t.Fatalf("event %v", m)
	}
	s.stop(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() {
		for lines.Scan() {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch after serve stopped: %v", err)
		}
	case <-time.After(exitTimeout):
		t.Fatal("watch did not end when serve stopped")
	}
}
