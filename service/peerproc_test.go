//go:build linux || darwin

package service_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests of bound tokens need real processes: the test binary, run
// again with DR_HELPER set, is a peer that dials the socket, says hello
// and prints the reply. It then waits for its stdin to end, so the test
// decides when it exits; with DR_HELPER_SPAWN set it first starts one more
// helper as its own child (a descendant), which shares its stdin and
// stdout.

func TestMain(m *testing.M) {
	if os.Getenv("DR_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// helperMain is a peer process: DR_SOCKET, DR_TOKEN and DR_LABEL say
// where, with what, and how its lines start. It prints "LABEL hello
// {reply}" (or "LABEL closed" when the server closed the connection
// without a reply). With DR_TOKEN2 it then says hello on a second
// connection and prints "LABEL second {reply}". With DR_HELPER_SPAWN it
// then starts a child helper with DR_CHILD_TOKEN (default: its own token)
// and prints "LABEL spawned PID". It prints "LABEL closed" when the server
// closes its first connection, and exits when stdin ends.
func helperMain() int {
	label := os.Getenv("DR_LABEL")
	say := func(format string, args ...any) { fmt.Printf(label+" "+format+"\n", args...) }
	c, reply := helperHello(os.Getenv("DR_TOKEN"))
	if c == nil {
		say("closed")
		return 0
	}
	defer c.Close()
	say("hello %s", reply)
	if os.Getenv("DR_SPAWN_FIRST") != "" {
		// The child's hello comes before this process's second one.
		cmd, done := spawnHelper(label, os.Getenv("DR_CHILD_TOKEN"))
		if cmd == nil {
			return 1
		}
		defer cmd.Wait()
		<-done
	}
	if tok := os.Getenv("DR_TOKEN2"); tok != "" {
		c2, reply := helperHello(tok)
		if c2 == nil {
			say("second closed")
		} else {
			defer c2.Close()
			say("second %s", reply)
		}
	}
	if os.Getenv("DR_HELPER_SPAWN") != "" {
		tok := os.Getenv("DR_CHILD_TOKEN")
		if tok == "" {
			tok = os.Getenv("DR_TOKEN")
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "DR_HELPER_SPAWN=", "DR_TOKEN2=", "DR_TOKEN="+tok, "DR_LABEL="+label+"/child")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			say("error %v", err)
			return 1
		}
		defer cmd.Wait()
		say("spawned %d", cmd.Process.Pid)
	}
	go func() {
		io.Copy(io.Discard, c)
		say("closed")
	}()
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// spawnHelper starts a child helper saying hello with token, its output
// passed on to this process's; done is closed once its hello's line is.
func spawnHelper(label, token string) (*exec.Cmd, <-chan struct{}) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "DR_HELPER_SPAWN=", "DR_SPAWN_FIRST=", "DR_TOKEN2=", "DR_TOKEN="+token, "DR_LABEL="+label+"/child")
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Printf("%s error %v\n", label, err)
		return nil, nil
	}
	if err := cmd.Start(); err != nil {
		fmt.Printf("%s error %v\n", label, err)
		return nil, nil
	}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			fmt.Println(sc.Text())
			if first {
				first = false
				close(done)
			}
		}
		if first {
			close(done)
		}
	}()
	return cmd, done
}

// helperHello dials DR_SOCKET and says hello with token; it returns the
// connection and the reply line, or nil when the server closed it first.
func helperHello(token string) (net.Conn, string) {
	c, err := net.Dial("unix", os.Getenv("DR_SOCKET"))
	if err != nil {
		return nil, ""
	}
	hello, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session.hello", "params": map[string]any{"token": token}})
	if _, err := c.Write(append(hello, '\n')); err != nil {
		c.Close()
		return nil, ""
	}
	// One byte at a time, so that nothing after the reply is read here.
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := c.Read(b); err != nil {
			c.Close()
			return nil, ""
		}
		if b[0] == '\n' {
			return c, string(line)
		}
		line = append(line, b[0])
	}
}

// helperOptions: spawn a child helper (saying hello with childToken, or
// the same token), say hello a second time with token2, run exe as cred.
type helperOptions struct {
	spawn              bool
	spawnFirst         bool // the child says hello (childToken) before the helper's second hello
	childToken, token2 string
	cred               *syscall.Credential
	exe                string
}

// helper is one running helper process (and its child, if it spawned
// one), with its output lines.
type helper struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startHelper runs a helper peer: it says hello with token on e's socket,
// then does what o says.
func startHelper(t testing.TB, e *env, label, token string, o helperOptions) *helper {
	t.Helper()
	exe := o.exe
	if exe == "" {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "DR_HELPER=1", "DR_SOCKET="+e.socket, "DR_TOKEN="+token, "DR_LABEL="+label,
		"DR_TOKEN2="+o.token2, "DR_CHILD_TOKEN="+o.childToken)
	if o.spawn {
		cmd.Env = append(cmd.Env, "DR_HELPER_SPAWN=1")
	}
	if o.spawnFirst {
		cmd.Env = append(cmd.Env, "DR_SPAWN_FIRST=1")
	}
	cred := o.cred
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	// Plain pipes: Wait closes neither, so a killed helper's child keeps
	// both, and its lines are still read.
	inR, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	h := &helper{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { h.stop(); out.Close() })
	return h
}

// stop closes the helper's stdin (its child's too) and waits for it.
func (h *helper) stop() {
	h.stdin.Close()
	done := make(chan struct{})
	go func() { h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		<-done
	}
}

// kill ends the helper process itself at once (not its child) and reaps it.
func (h *helper) kill() {
	h.cmd.Process.Kill()
	h.cmd.Wait()
}

// expect waits for the next line starting with prefix (other lines are
// skipped) and returns the rest of it.
func (h *helper) expect(prefix string) string {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("helper output ended before %q", prefix)
			}
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest)
			}
		case <-timeout:
			h.t.Fatalf("no %q from the helper within 10 s", prefix)
		}
	}
}

// expectAll waits for a line with each of prefixes, in any order (a
// connection the server closes may say so before or after a reply on
// another), and returns the rest of each.
func (h *helper) expectAll(prefixes ...string) map[string]string {
	h.t.Helper()
	got := make(map[string]string)
	timeout := time.After(10 * time.Second)
	for len(got) < len(prefixes) {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("helper output ended before %q (got %v)", prefixes, got)
			}
			for _, p := range prefixes {
				if rest, ok := strings.CutPrefix(l, p); ok {
					got[p] = strings.TrimSpace(rest)
					break
				}
			}
		case <-timeout:
			h.t.Fatalf("not every one of %q from the helper within 10 s (got %v)", prefixes, got)
		}
	}
	return got
}

// expectHello waits for label's hello reply and decodes it.
func (h *helper) expectHello(label string) map[string]any {
	h.t.Helper()
	rest := h.expect(label + " ")
	raw, ok := strings.CutPrefix(rest, "hello ")
	if !ok {
		h.t.Fatalf("%s: %s, want a hello reply", label, rest)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		h.t.Fatal(err)
	}
	return m
}
