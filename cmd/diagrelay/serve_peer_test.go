package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

func TestServePeerFlagErrors(t *testing.T) {
	wantExit(t, "--host-socket maybe", runDiagrelay(t, nil, "", "serve", "--stdio", "--host-socket", "maybe"), 2, "host-socket")
	wantExit(t, "--host-socket off without --stdio", runDiagrelay(t, nil, "", "serve", "--host-socket", "off", "--socket", filepath.Join(shortTempDir(t), "s")), 2, "--stdio")
}

// serve --bind-peer on the real binary: the first `diagrelay report` owns
// the token; once it has exited the thread shows it (peer and exited), and
// another process's report is refused.
func TestServeBindPeer(t *testing.T) {
	s := startServer(t, "", "", "--bind-peer")
	tok, _ := s.open("/root/bound")
	if r := runDiagrelay(t, s.childEnv(tok), "", "report", "--level", "info", "first process"); r.code != 0 {
		t.Fatalf("the first process's report: %v", r)
	}
	var st struct {
		Diagnostics []any `json:"diagnostics"`
		Peer        *struct {
			PID int    `json:"pid"`
			Exe string `json:"exe"`
		} `json:"peer"`
		Exited      *time.Time `json:"exited"`
		PeerRefused int        `json:"peer_refused"`
	}
	exe, _ := os.Executable()
	testutil.Eventually(t, 10*time.Second, "the bound process's exit in the status", func() bool {
		if err := s.host.callInto("thread.status", map[string]string{"path": "/root/bound"}, &st); err != nil {
			t.Fatal(err)
		}
		return st.Exited != nil
	})
	if st.Peer == nil || st.Peer.PID <= 0 || st.Peer.Exe != exe || st.Exited == nil || len(st.Diagnostics) != 1 {
		t.Fatalf("status after the bound process exited: %+v (peer %+v)", st, st.Peer)
	}
	r := runDiagrelay(t, s.childEnv(tok), "", "report", "--level", "info", "second process")
	wantExit(t, "another process's report", r, 1, "bound to another process")
	s.host.callInto("thread.status", map[string]string{"path": "/root/bound"}, &st)
	if st.PeerRefused != 1 || len(st.Diagnostics) != 1 {
		t.Fatalf("status after the refused report: %+v", st)
	}
	// bind: false opts a thread out.
	var res struct{ Token string }
	if err := s.host.callInto("runtime.open", map[string]any{"path": "/root/free", "bind": false}, &res); err != nil {
		t.Fatal(err)
	}
	free := res.Token
	for range 2 {
		if r := runDiagrelay(t, s.childEnv(free), "", "report", "--level", "info", "anyone"); r.code != 0 {
			t.Fatalf("a report with an unbound token: %v", r)
		}
	}
}

// serve --host-socket off: no host.token (a stale one is removed), the
// socket serves children only, and watch says how the session is reached.
func TestServeHostSocketOff(t *testing.T) {
	data := filepath.Join(shortTempDir(t), "data")
	first := startServer(t, data, "")
	stale := first.readHostToken()
	first.stop(syscall.SIGTERM)
	s := startServer(t, data, "", "--host-socket", "off")
	if _, err := os.Stat(filepath.Join(data, "host.token")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("host.token under --host-socket off: %v", err)
	}
	if _, err := dialSocket(s.socket, stale); err == nil || !strings.Contains(err.Error(), "unknown token") {
		t.Fatalf("a hello with the earlier serve's host token: %v", err)
	}
	tok, _ := s.open("/root/c")
	if r := runDiagrelay(t, s.childEnv(tok), "", "report", "--level", "info", "still served"); r.code != 0 {
		t.Fatalf("a child's report: %v", r)
	}
	wantExit(t, "watch", runDiagrelay(t, nil, "", "watch", "--plain", "--data", data, "--socket", s.socket), 1, "--host-socket off")
}
