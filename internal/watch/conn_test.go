package watch

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// TestConnAgainstABadServer: a peer on the socket that sends garbage,
// replies nobody asked for, and an event full of escapes. The connection
// survives each, hands the event on (for the printer and the model to
// sanitize), and fails calls once the peer is gone.
func TestConnAgainstABadServer(t *testing.T) {
	dir, err := os.MkdirTemp("", "dw")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		br.ReadString('\n') // the hello
		nc.Write([]byte("not json\n{\"id\":99,\"result\":{}}\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"role\":\"host\"}}\n"))
		nc.Write([]byte(`{"jsonrpc":"2.0","method":"event","params":{"kind":"delivered","thread":"/root/x","message":"\u001b]0;t\u0007hi"}}` + "\n"))
		nc.Write([]byte(`{"jsonrpc":"2.0","method":"event","params":"not an object"}` + "\n"))
		br.ReadString('\n') // a call, never answered: the server goes away
	}()
	c, err := Dial(sock, "  token\n")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-c.Events():
		if ev.Kind != "delivered" || !strings.Contains(wire.Str(ev.Message), "\x1b") {
			t.Fatalf("event %+v", ev)
		}
		if p := cleanEvent(ev); wire.Str(p.Message) != "hi" {
			t.Fatalf("sanitized %q", wire.Str(p.Message))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	if err := c.Call("thread.list", struct{}{}, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after the server left: %v", err)
	}
	if _, ok := <-c.Events(); ok {
		t.Fatal("events still open")
	}
}
