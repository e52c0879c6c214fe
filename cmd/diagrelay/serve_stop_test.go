package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
)

// SIGTERM and SIGINT: serve stops accepting, ends its connections, closes
// the store and exits 0; the socket file is gone, the bbolt file opens
// cleanly and holds every report; a restarted serve serves the same mailbox
// and no thread status (it is memory-only).
func TestServeSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startServer(t, "", "")
			tok, _ := s.open("/root/a")
			child := s.dial(tok) // an idle child: shutdown must not wait for it
			if _, err := child.call("diagnostic.report", map[string]string{"level": "info", "message": "before " + sig.String()}); err != nil {
				t.Fatal(err)
			}
			oldHostToken := s.readHostToken()
			s.stop(sig)
			if !strings.Contains(s.stderr.String(), "shutting down") {
				t.Errorf("stderr does not tell of the shutdown:\n%s", s.stderr.String())
			}
			if _, err := child.call("diagnostic.probe", nil); err == nil {
				t.Error("a child connection still answers after the shutdown")
			}

			checkBolt(t, filepath.Join(s.data, datadir.MailboxFile))
			st, err := mailbox.Open(filepath.Join(s.data, datadir.MailboxFile), mailbox.WithLockTimeout(0))
			if err != nil {
				t.Fatalf("reopening the store: %v", err)
			}
			es, err := st.Read("/root", 0)
			st.Close()
			if err != nil || len(es) != 1 || es[0].ParentMessage.Message != "before "+sig.String() || es[0].From != "/root/a" {
				t.Fatalf("store after %v: %+v, %v", sig, es, err)
			}

			s2 := startServer(t, s.data, s.socket)
			if msgs := readMailbox(t, s2.host, "/root", 0); len(msgs) != 1 || msgs[0].ID != es[0].ID {
				t.Errorf("after restart: %+v", msgs)
			}
			_, err = s2.host.call("thread.status", map[string]string{"path": "/root/a"})
			wantRPCError(t, "thread.status after restart", err, wire.CodeUnknownThread, "never opened")
			if s2.readHostToken() == oldHostToken {
				t.Error("restart kept the old host token")
			}
			_, err = dialSocket(s2.socket, tok)
			wantRPCError(t, "old child token after restart", err, wire.CodeUnauthenticated, "unknown token")
			s2.stop(syscall.SIGTERM)
		})
	}
}

// The host closing stdin ends the service cleanly.
func TestServeHostEOF(t *testing.T) {
	s := startServer(t, "", "")
	s.stdin.Close()
	if code, sig := s.wait(); code != 0 {
		t.Fatalf("after stdin closed: exit %d, signal %v; stderr:\n%s", code, sig, s.stderr.String())
	}
}

// A second serve on a live socket, or on a data directory in use, fails
// with exit 1 and leaves the first one working.
func TestServeRefusesSecondInstance(t *testing.T) {
	s := startServer(t, "", "")
	other := shortTempDir(t)
	r := runDiagrelay(t, nil, "", "serve", "--socket", s.socket, "--data", filepath.Join(other, "d"))
	wantExit(t, "second serve on the same socket", r, 1, "another server is listening")
	r = runDiagrelay(t, nil, "", "serve", "--socket", filepath.Join(other, "s"), "--data", s.data)
	wantExit(t, "second serve on the same data", r, 1, "locked")
	tok, _ := s.open("/root/still")
	wantExit(t, "report to the first serve", runDiagrelay(t, s.childEnv(tok), "", "report", "--level", "info", "still here"), 0, "")
}

// checkBolt opens a bbolt file read-only and runs bbolt's consistency check.
func checkBolt(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("bbolt open %s: %v", path, err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt check %s: %v", path, err)
	}
}

// A host that closes its end of stdout (but not stdin) costs the
// notifications, not the service: serve logs the failed write instead of
// dying of SIGPIPE, children's reports still reach the mailbox, and
// closing stdin then ends serve cleanly.
func TestServeHostClosesStdout(t *testing.T) {
	s := startServer(t, "", "")
	tok, _ := s.open("/root/p")
	s.stdout.Close() // the host stops reading; stdin stays open
	wantExit(t, "report", runDiagrelay(t, s.childEnv(tok), "", "report", "--level", "info", "nobody reads"), 0, "")
	if !s.waitStderr("broken pipe") {
		code, sig := s.wait()
		t.Fatalf("no failed write logged; serve ended with exit %d, signal %v; stderr:\n%s", code, sig, s.stderr.String())
	}
	s.stdin.Close()
	if code, sig := s.wait(); code != 0 {
		t.Fatalf("after stdin closed: exit %d, signal %v; stderr:\n%s", code, sig, s.stderr.String())
	}
	st, err := mailbox.Open(filepath.Join(s.data, datadir.MailboxFile), mailbox.WithLockTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if es, err := st.Read("/root", 0); err != nil || len(es) != 1 || es[0].ParentMessage.Message != "nobody reads" {
		t.Errorf("store: %+v, %v", es, err)
	}
}

// serve with no --socket and no XDG_RUNTIME_DIR listens in its data
// directory; SIGTERM leaves that directory without diagrelay.sock, also
// when the signal comes as soon as the socket file appears (before the
// service may have started accepting on it).
func TestServeSigtermRemovesDefaultSocket(t *testing.T) {
	env, home := newcomerEnv(t)
	for i := range 5 {
		data := filepath.Join(home, fmt.Sprintf("d%d", i))
		socket := filepath.Join(data, "diagrelay.sock")
		cmd := diagrelayCmd(t.Context(), t, env, "serve", "--data", data)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitSocket(t, socket)
		if i == 0 { // once with the service surely accepting (the file comes at bind, before listen)
			testutil.Eventually(t, exitTimeout, "serve accepting on "+socket, func() bool {
				c, err := net.Dial("unix", socket)
				if err == nil {
					c.Close()
				}
				return err == nil
			})
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("round %d: serve after SIGTERM: %v; stderr:\n%s", i, err, stderr.String())
		}
		if _, err := os.Lstat(socket); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("round %d: %s still there after a clean exit (%v); stderr:\n%s", i, socket, err, stderr.String())
		}
	}
}
