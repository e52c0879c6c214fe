package client_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/servetest"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

// diagrelay runs the real binary, built once for this package's tests.
var diagrelay servetest.Command

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	diagrelay, err = servetest.Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startChild starts a real serve, opens path and dials it as the child.
func startChild(t *testing.T, path string) (*servetest.Server, *client.Child, string) {
	t.Helper()
	s := servetest.Start(t, diagrelay, "", "")
	tok, _ := s.Open(path)
	c, err := client.Dial(s.Socket, tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c, tok
}

func readMailbox(t *testing.T, s *servetest.Server, recipient string) []wire.Message {
	t.Helper()
	var res wire.Page
	if err := s.Host.Call("mailbox.read", map[string]string{"recipient": recipient}, &res); err != nil {
		t.Fatalf("mailbox.read %s: %v", recipient, err)
	}
	return res.Messages
}

func wantCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Code != code {
		t.Errorf("%s: error %v, want a *client.Error with code %d", what, err, code)
	}
}

// A report travels over the real socket to the parent's mailbox and UI,
// attributed by the token, not by anything the child says.
func TestReport(t *testing.T) {
	s, c, _ := startChild(t, "/root/go")
	if err := c.Report(diag.Warning, "config \x1b[31mmissing\x1b[0m", "lint"); err != nil {
		t.Fatal(err)
	}
	thread, text, level := servetest.UINotify(t, servetest.NextNote(t, s.Host))
	if thread != "/root/go" || text != "/root/go [lint]: config missing" || level != "warning" {
		t.Errorf("ui.notify = {%q, %q, %q}", thread, text, level)
	}
	msgs := readMailbox(t, s, "/root")
	if len(msgs) != 1 || msgs[0].From != "/root/go" || msgs[0].Message != "config missing" || msgs[0].Source != "lint" || msgs[0].Level != "warning" {
		t.Errorf("mailbox: %+v", msgs)
	}
}

// A message or source far over the frame limit is sanitized and cut before
// it is sent, so it is taken, not refused for its size.
func TestReportAnySize(t *testing.T) {
	s, c, _ := startChild(t, "/root/big")
	huge := strings.Repeat("word ", 40<<10) // 200 KiB, three times the frame limit
	if err := c.Report(diag.Info, huge, strings.Repeat("s", 100<<10)); err != nil {
		t.Fatalf("a 200 KiB report: %v", err)
	}
	msgs := readMailbox(t, s, "/root")
	if len(msgs) != 1 || msgs[0].Message != sanitize.Message(huge) || msgs[0].Source != sanitize.Source(strings.Repeat("s", 100<<10)) {
		t.Fatalf("mailbox: %d messages", len(msgs))
	}
	if n := utf8.RuneCountInString(msgs[0].Message); n > 1000 {
		t.Errorf("stored message of %d characters", n)
	}
}

// Errors carry the JSON-RPC code: a bad level, a blank message, an unknown
// token, a revoked one.
func TestErrors(t *testing.T) {
	s, c, tok := startChild(t, "/root/e")
	wantCode(t, "fatal level", c.Report("fatal", "x", ""), -32602)
	wantCode(t, "blank message", c.Report(diag.Info, "\x1b[0m \u200b", ""), -32602)
	if err := c.Report(diag.Info, "still usable", ""); err != nil {
		t.Errorf("after refused reports: %v", err)
	}

	_, err := client.Dial(s.Socket, strings.Repeat("0", 64))
	wantCode(t, "unknown token", err, -32001)

	s.Open("/root/e") // reopen: the old token is revoked and its connections closed
	if err := c.Report(diag.Info, "late", ""); err == nil {
		t.Error("report after reopen succeeded on a revoked connection")
	}
	_, err = client.Dial(s.Socket, tok)
	wantCode(t, "hello after reopen", err, -32003)
	if err == nil || !strings.HasPrefix(err.Error(), "session.hello: ") {
		t.Errorf("error %v, want it to name the method", err)
	}
	// The re-exported codes are the protocol's numbers (docs/protocol.md).
	for code, want := range map[int]int{client.CodeInvalidParams: -32602, client.CodeUnauthenticated: -32001,
		client.CodeForbidden: -32002, client.CodeRevoked: -32003, client.CodeUnknownThread: -32004, client.CodeStorage: -32005,
		client.CodeShuttingDown: -32006, client.CodeTooManyConns: -32007} {
		if code != want {
			t.Errorf("code %d, want %d", code, want)
		}
	}
}

func TestProbe(t *testing.T) {
	_, c, _ := startChild(t, "/root/p")
	for _, min := range []string{"", "1.0.0", "v1.1.0"} {
		cp, ok, err := c.Probe(min)
		if err != nil || !ok || cp.Version != "1.1.0" || cp.Protocol != 1 {
			t.Errorf("Probe(%q) = %+v, %v, %v", min, cp, ok, err)
		}
	}
	cp, ok, err := c.Probe("9.0.0")
	if err != nil || ok || cp.Version != "1.1.0" || cp.Protocol != 1 {
		t.Errorf("Probe(9.0.0) = %+v, %v, %v; want the reply, not compatible, no error", cp, ok, err)
	}
	if _, ok, err := c.Probe("latest"); err == nil || ok {
		t.Errorf("Probe(latest) = %v, %v; want an error", ok, err)
	}
}

// Empty arguments come from the environment; with neither, ErrNotHosted.
func TestDialEnvironment(t *testing.T) {
	t.Setenv(client.EnvSocket, "")
	t.Setenv(client.EnvToken, "")
	if _, err := client.Dial("", ""); !errors.Is(err, client.ErrNotHosted) {
		t.Errorf("no environment: %v, want ErrNotHosted", err)
	}
	s := servetest.Start(t, diagrelay, "", "")
	tok, _ := s.Open("/root/env")
	t.Setenv(client.EnvSocket, s.Socket)
	if _, err := client.Dial("", ""); !errors.Is(err, client.ErrNotHosted) {
		t.Errorf("no token: %v, want ErrNotHosted", err)
	}
	t.Setenv(client.EnvToken, tok)
	c, err := client.Dial("", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Report(diag.Error, "from the environment", ""); err != nil {
		t.Error(err)
	}
	c.Close()
	if err := c.Report(diag.Info, "after Close", ""); err == nil {
		t.Error("Report after Close succeeded")
	}
}

// One Child is safe for concurrent use: every report arrives once.
func TestConcurrentReports(t *testing.T) {
	s, c, _ := startChild(t, "/root/many")
	var wg sync.WaitGroup
	for i := range 5 { // the gate's window: 5 in 10 s
		wg.Go(func() {
			if err := c.Report(diag.Info, fmt.Sprintf("report %d", i), ""); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if msgs := readMailbox(t, s, "/root"); len(msgs) != 5 {
		t.Errorf("%d messages, want 5", len(msgs))
	}
}

// The worst case for the frame: every unit a character JSON escapes
// longest, the message and source at their send limits, is still taken.
func TestReportWorstFrame(t *testing.T) {
	s, c, _ := startChild(t, "/root/frame")
	for _, ch := range []string{"<", "\"", "\\", "€", "&"} {
		if err := c.Report(diag.Info, strings.Repeat(ch, client.SendLimit+5), strings.Repeat(ch, client.SendSourceLimit+5)); err != nil {
			t.Fatalf("%q: %v", ch, err)
		}
	}
	if msgs := readMailbox(t, s, "/root"); len(msgs) != 5 {
		t.Fatalf("mailbox: %d messages", len(msgs))
	}
}

// A secret straddling the service's 1000-unit cut leaves no prefix: the
// client sends past the cut, and the service redacts, then cuts.
func TestReportSecretAtTheCut(t *testing.T) {
	s, c, _ := startChild(t, "/root/cut")
	tok := "ghp_" + strings.Repeat("Q2xM9zR4pW", 3) + "7vK3nT"
	if err := c.Report(diag.Error, strings.Repeat("x", 985)+" "+tok+" tail", ""); err != nil {
		t.Fatal(err)
	}
	msgs := readMailbox(t, s, "/root")
	if len(msgs) != 1 || strings.Contains(msgs[0].Message, "ghp_") || strings.Contains(msgs[0].Text, "ghp_") {
		t.Fatalf("mailbox: %+v", msgs)
	}
}
