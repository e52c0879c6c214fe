package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// A bound thread's process shows in the detail panel (pid, uid, the
// sanitized executable), its exit in the tree and the detail, and a
// reopen forgets both until the new generation's status says otherwise.
func TestExitedThreadShowsItsPeer(t *testing.T) {
	st := NewState()
	st.SetThreads([]wire.ThreadInfo{{Path: "/root/b", Parent: "/root", Open: true, Generation: 1}})
	st.SetStatus(wire.Status{Path: "/root/b", Parent: "/root", Open: true, Generation: 1, PeerRefused: 2,
		Peer: &wire.Peer{PID: 4242, UID: 1000, Exe: "/usr/bin/pi\x1b]0;PWNED\x07"}})
	st.Apply(wire.Event{Kind: wire.EventExited, Thread: "/root/b", At: t0, Generation: 1,
		Peer: &wire.Peer{PID: 4242, UID: 1000, Exe: "/usr/bin/pi\x1b]0;PWNED\x07"}})
	m := resized(NewModel(st, nil, "/tmp/s", time.UTC), 120, 24)
	m.sel = "/root/b"
	_, rows := paint(t, m)
	screen := strings.Join(rows, "\n")
	for _, want := range []string{"b g1 exited", "pid 4242 · uid 1000 · /usr/bin/pi", "exited 10:00:00", "2 hellos refused"} {
		if !strings.Contains(screen, want) {
			t.Errorf("%q not on screen:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "PWNED") {
		t.Errorf("the executable's escape reached the screen:\n%s", screen)
	}
	st.Apply(wire.Event{Kind: wire.EventReopened, Thread: "/root/b", At: t0, Generation: 2})
	if th := st.Threads["/root/b"]; th.Peer != nil || th.Exited != nil {
		t.Fatalf("a reopened thread kept the old process: %+v", th.ThreadInfo)
	}
}

func TestPrinterShowsPeerAndExit(t *testing.T) {
	var b bytes.Buffer
	p := &Printer{W: &b, Loc: time.UTC}
	exited := t0.Add(time.Second)
	p.Threads([]wire.ThreadInfo{{Path: "/root/b", Open: true, Generation: 1, Exited: &exited, PeerRefused: 1,
		Peer: &wire.Peer{PID: 7, UID: 0, Exe: "/bin/x\x1b[2J"}}})
	p.Event(wire.Event{Kind: wire.EventExited, Thread: "/root/b", At: exited, Generation: 1, Peer: &wire.Peer{PID: 7, Exe: "/bin/x"}})
	want := "thread /root/b open gen 1 diagnostics 0 dropped duplicate 0 rate 0 cap 0 invalid 0 redacted 0 peer pid 7 uid 0 exe /bin/x exited 10:00:01.000 peer_refused 1\n" +
		"10:00:01.000 exited /root/b gen 1 peer pid 7 uid 0 exe /bin/x\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
