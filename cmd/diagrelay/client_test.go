package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/service"
)

// nodeChild is the JavaScript child client, relative to this package.
const nodeChild = "../../clients/js/examples/child.js"

// runNode runs `node child.js args...` with env as its whole child
// environment (plus PATH and HOME from the test's).
func runNode(t *testing.T, node string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{nodeChild}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() < 0) {
		t.Fatalf("node %v: %v (stderr %q)", args, err, stderr.String())
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

func lookNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	return node
}

// examples/node/child.js, a JavaScript child (docs/clients.md), against a real serve: it reports, the host
// gets the notification and the parent message, attributed by the token;
// its exit codes match `diagrelay report`.
func TestNodeChild(t *testing.T) {
	node := lookNode(t)
	s := startServer(t, "", "")
	tok, _ := s.open("/root/js")
	env := s.childEnv(tok)

	r := runNode(t, node, env, "warning", "from node \x1b]0;pwn\x07ok", "js-lint")
	if r.code != 0 || r.stdout != "reported to diagrelay 1.1.0 (protocol 1)\n" {
		t.Fatalf("node child: %v", r)
	}
	thread, text, level := uiNotifyParams(t, s.host.nextNote(t))
	if thread != "/root/js" || text != "/root/js [js-lint]: from node ok" || level != "warning" {
		t.Errorf("ui.notify = {%q, %q, %q}", thread, text, level)
	}
	msgs := readMailbox(t, s.host, "/root", 0)
	if len(msgs) != 1 || msgs[0].From != "/root/js" || msgs[0].Message != "from node ok" || msgs[0].Source != "js-lint" {
		t.Errorf("mailbox: %+v", msgs)
	}

	wantExit(t, "no source", runNode(t, node, env, "info", "no source"), 0, "")
	wantExit(t, "bad level", runNode(t, node, env, "fatal", "x"), 1, "-32602")
	wantExit(t, "usage", runNode(t, node, env, "info"), 2, "usage")
	wantExit(t, "no environment", runNode(t, node, nil, "info", "x"), 1, "DIAGRELAY_SOCKET")
	wantExit(t, "no socket", runNode(t, node, []string{envSocket + "=" + filepath.Join(s.data, "nothing"), envToken + "=" + tok}, "info", "x"), 1, "not hosted")
	wantExit(t, "unknown token", runNode(t, node, s.childEnv(strings.Repeat("0", 64)), "info", "x"), 1, "unknown token")
	s.open("/root/js") // reopen: the old token is revoked
	wantExit(t, "revoked token", runNode(t, node, env, "info", "x"), 1, "revoked")
}

// The JavaScript child goes on only with a compatible host (protocol 1,
// version >= 1.1.0, semantic-version order); a scripted peer plays hosts
// that the real service never is.
func TestNodeChildProbe(t *testing.T) {
	node := lookNode(t)
	for _, tt := range []struct {
		reply string
		code  int
	}{
		{`{"version":"1.1.0","protocol":1}`, 0},
		{`{"version":"v1.2.0","protocol":1}`, 0},
		{`{"version":"10.0.0","protocol":1}`, 0},
		{`{"version":"1.1.0+build.5","protocol":1}`, 0},
		{`{"version":"1.1.0-rc.1","protocol":1}`, 1}, // a prerelease precedes its release
		{`{"version":"1.0.9","protocol":1}`, 1},
		{`{"version":"0.10.0","protocol":1}`, 1},
		{`{"version":"1.1.0","protocol":2}`, 1},
		{`{"version":"1.1.0","protocol":"1"}`, 1},
		{`{"version":"1.1","protocol":1}`, 1},
		{`{"protocol":1}`, 1},
		{`null`, 1}, // the legacy argument-free reply
	} {
		sock := scriptedHost(t, func(method string) []string {
			if method == "diagnostic.probe" {
				return []string{`{"jsonrpc":"2.0","method":"ui.notify","params":{}}`, `{"jsonrpc":"2.0","id":ID,"result":` + tt.reply + `}`}
			}
			return []string{`{"jsonrpc":"2.0","id":ID,"result":{}}`}
		})
		r := runNode(t, node, []string{envSocket + "=" + sock, envToken + "=t"}, "info", "x")
		if r.code != tt.code || (tt.code == 1 && !strings.Contains(r.stderr, "incompatible host")) {
			t.Errorf("probe reply %s: %v, want exit %d", tt.reply, r, tt.code)
		}
	}
}

// `diagrelay report` and `probe` in-process against an in-process server
// with a real bbolt mailbox, to cover the client code in this process.
func TestReportProbeInProcess(t *testing.T) {
	dir := shortTempDir(t)
	store, err := mailbox.Open(filepath.Join(dir, "mailbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv := service.New(service.Config{Mailbox: store})
	l, err := serve.Listen(filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
		defer cancel()
		srv.Shutdown(ctx)
		store.Close()
	})
	// The host on an in-memory pipe, as it would be on stdio.
	hostEnd, testEnd := net.Pipe()
	go srv.ServeHost(hostEnd, hostEnd)
	host := rpcConn{rpc.New(testEnd, testEnd, testEnd, rpc.Options{})}
	t.Cleanup(func() { host.Close() })
	tok, _, err := openRuntime(host, "/root/inproc")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envSocket, filepath.Join(dir, "s"))
	t.Setenv(envToken, tok)

	var stdout, stderr bytes.Buffer
	if code := run([]string{"probe", "--min", "1.0.0"}, nil, &stdout, &stderr); code != 0 || stdout.String() != `{"version":"1.1.0","protocol":1}`+"\n" {
		t.Errorf("probe: exit %d, %q, %q", code, stdout.String(), stderr.String())
	}
	if code := run([]string{"report", "--level", "info", "--source", "in", "in", "process"}, nil, &stdout, &stderr); code != 0 {
		t.Errorf("report: exit %d, %q", code, stderr.String())
	}
	es, err := store.Read("/root", 0)
	if err != nil || len(es) != 1 || es[0].ParentMessage.Message != "in process" || es[0].From != "/root/inproc" || es[0].Source != "in" {
		t.Errorf("store: %+v, %v", es, err)
	}
}

// How `diagrelay probe` and `report` treat replies the real service never
// sends: incompatible capabilities, notifications before the reply, errors,
// a wrong id, garbage, a closed connection.
func TestClientAgainstScriptedHost(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":ID,"result":{}}`
	probeReply := func(result string) func(string) []string {
		return func(method string) []string {
			if method == "diagnostic.probe" {
				return []string{`{"jsonrpc":"2.0","id":ID,"result":` + result + `}`}
			}
			return []string{ok}
		}
	}
	tests := []struct {
		name   string
		script func(method string) []string
		args   []string
		code   int
		out    string // stdout (exit 0) or a piece of stderr
	}{
		{"probe compatible", probeReply(`{"version":"v1.4.2","protocol":1}`), []string{"probe"}, 0, `{"version":"v1.4.2","protocol":1}` + "\n"},
		{"probe old host", probeReply(`{"version":"1.0.0","protocol":1}`), []string{"probe"}, 1, "incompatible"},
		{"probe old host, lower min", probeReply(`{"version":"1.0.0","protocol":1}`), []string{"probe", "--min", "1.0.0"}, 0, `{"version":"1.0.0","protocol":1}` + "\n"},
		{"probe protocol 2", probeReply(`{"version":"1.1.0","protocol":2}`), []string{"probe"}, 1, "incompatible"},
		{"probe legacy reply", probeReply(`null`), []string{"probe"}, 1, "incompatible"},
		{"probe invalid version", probeReply(`{"version":"one","protocol":1}`), []string{"probe"}, 1, "incompatible"},
		{"probe prerelease", probeReply(`{"version":"1.1.0-beta","protocol":1}`), []string{"probe"}, 1, "incompatible"},
		{"notifications first", func(method string) []string {
			return []string{`{"jsonrpc":"2.0","method":"ui.notify","params":{"x":1}}`, ok}
		}, []string{"report", "--level", "info", "hi"}, 0, ""},
		{"report refused", func(method string) []string {
			if method == "diagnostic.report" {
				return []string{`{"jsonrpc":"2.0","id":ID,"error":{"code":-32005,"message":"disk full"}}`}
			}
			return []string{ok}
		}, []string{"report", "--level", "info", "hi"}, 1, "disk full"},
		{"hello refused", func(method string) []string {
			return []string{`{"jsonrpc":"2.0","id":ID,"error":{"code":-32001,"message":"unknown token"}}`}
		}, []string{"report", "--level", "info", "hi"}, 1, "unknown token"},
		{"error without id", func(method string) []string {
			return []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"malformed JSON"}}`}
		}, []string{"probe"}, 1, "malformed JSON"},
		{"wrong id", func(method string) []string {
			return []string{`{"jsonrpc":"2.0","id":99,"result":{}}`}
		}, []string{"report", "--level", "info", "hi"}, 1, "another request"},
		{"garbage", func(method string) []string { return []string{`<html>`} }, []string{"probe"}, 1, "bad reply"},
		{"hang up", func(method string) []string {
			if method == "diagnostic.report" {
				return nil // close without replying
			}
			return []string{ok}
		}, []string{"report", "--level", "info", "hi"}, 1, "reading the reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envSocket, scriptedHost(t, tt.script))
			t.Setenv(envToken, "t")
			var stdout, stderr bytes.Buffer
			code := run(tt.args, nil, &stdout, &stderr)
			if code != tt.code ||
				(code == 0 && stdout.String() != tt.out) ||
				(code != 0 && !strings.Contains(stderr.String(), tt.out)) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout.String(), stderr.String(), tt.code, tt.out)
			}
		})
	}
}

// scriptedHost listens on a fresh socket and answers each request line with
// script(method)'s frames, "ID" replaced by the request's id; an empty
// answer closes the connection. It returns the socket path.
func scriptedHost(t testing.TB, script func(method string) []string) string {
	t.Helper()
	sock := filepath.Join(shortTempDir(t), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(exitTimeout))
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					if json.Unmarshal(sc.Bytes(), &req) != nil {
						return
					}
					frames := script(req.Method)
					if len(frames) == 0 {
						return
					}
					for _, f := range frames {
						if _, err := c.Write([]byte(strings.ReplaceAll(f, "ID", string(req.ID)) + "\n")); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return sock
}
