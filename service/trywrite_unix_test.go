//go:build unix

package service

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diagrelay/diagrelay/mailbox"
)

// hostPair is the two ends of what a host may give serve as stdout, as
// its child inherits them: blocking, a pipe (Go's exec) or a socket pair
// (Node's child_process). Not os.Pipe, whose ends do not block.
func hostPair(t *testing.T, kind string) (r, w *os.File) {
	t.Helper()
	switch kind {
	case "pipe":
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// The host's try-write fills a blocking pipe or socket to the brim and
// then takes nothing, without ever waiting; what it took reads back in
// order; once read, there is room again; a reader gone is an error.
func TestHostTryWriteNeverWaits(t *testing.T) {
	for _, kind := range []string{"pipe", "socketpair"} {
		t.Run(kind, func(t *testing.T) {
			r, w := hostPair(t, kind)
			try := hostTryWrite(w)
			if try == nil {
				t.Fatal("no try-write for a", kind)
			}
			chunk := bytes.Repeat([]byte("0123456789abcdef"), 512) // 8 KiB
			var sent bytes.Buffer
			done := make(chan error, 1)
			go func() {
				for i := 0; ; i++ {
					chunk[0] = byte('A' + i%26)
					n, err := try(chunk)
					if err != nil {
						done <- err
						return
					}
					if kind == "pipe" && n > pipeAtomic {
						done <- fmt.Errorf("wrote %d bytes to a pipe, more than %d", n, pipeAtomic)
						return
					}
					sent.Write(chunk[:n])
					if n == 0 {
						done <- nil
						return
					}
				}
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the try-write waited for room")
			}
			if sent.Len() < 4096 {
				t.Fatalf("only %d bytes taken before full", sent.Len())
			}
			got := make([]byte, sent.Len())
			if _, err := io.ReadFull(r, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, sent.Bytes()) {
				t.Fatal("what was read is not what the try-write reported written")
			}
			if n, err := try([]byte("more\n")); n != 5 || err != nil {
				t.Fatalf("after the reader emptied it: %d, %v; want 5, nil", n, err)
			}
			r.Close()
			if _, err := try([]byte("x")); err == nil {
				t.Fatal("no error writing with the reader gone")
			}
		})
	}
}

// Only a pipe or a socket is written without the writer goroutine.
func TestHostTryWriteOthers(t *testing.T) {
	if hostTryWrite(new(bytes.Buffer)) != nil {
		t.Error("a try-write for a bytes.Buffer")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if hostTryWrite(f) != nil {
		t.Error("a try-write for a regular file")
	}
}

// A host that reads its stdout late gets every reply once and in order:
// the first written inline by the host's loop, the rest, once the pipe
// or socket is full, by the writer goroutine, which the loop waits for.
func TestServeHostUnreadStdout(t *testing.T) {
	const n = 3000 // about 240 KiB of replies: more than a pipe holds
	for _, kind := range []string{"pipe", "socketpair"} {
		t.Run(kind, func(t *testing.T) {
			s := New(Config{Mailbox: mailbox.NewMemory()})
			inR, inW := hostPair(t, "pipe")
			outR, outW := hostPair(t, kind)
			served := make(chan error, 1)
			go func() { served <- s.ServeHost(inR, outW) }()
			go func() {
				for i := 1; i <= n; i++ {
					fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"nope"}`+"\n", i)
				}
				inW.Close()
			}()
			time.Sleep(200 * time.Millisecond) // the pipe fills meanwhile
			sc := bufio.NewScanner(outR)
			for i := 1; i <= n; i++ {
				if !sc.Scan() {
					t.Fatalf("reply %d: %v", i, sc.Err())
				}
				if want := fmt.Sprintf(`"id":%d,`, i); !bytes.Contains(sc.Bytes(), []byte(want)) {
					t.Fatalf("reply %d is %s", i, sc.Bytes())
				}
			}
			select {
			case err := <-served:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ServeHost did not end with its input")
			}
		})
	}
}
