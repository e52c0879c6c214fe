package client_test

import (
	"errors"
	"os"
	"testing"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/servetest"
)

// A host on the socket opens a runtime, a child reports on its token, and
// the host reads the report back in the status and the list, then closes
// the runtime, which revokes the token.
func TestHostOpenStatusListClose(t *testing.T) {
	s := servetest.Start(t, diagrelay, "", "")
	h, err := client.DialHost(s.Socket, s.HostToken()+"\n")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rt, err := h.Open("/root/x", client.OpenOptions{Parent: "/root"})
	if err != nil || rt.Path != "/root/x" || len(rt.Token) != 64 || rt.Generation != 1 {
		t.Fatalf("Open = %+v, %v", rt, err)
	}
	c, err := client.Dial(s.Socket, rt.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Report(diag.Warning, "unused import", "lint"); err != nil {
		t.Fatal(err)
	}
	if err := c.Report(diag.Warning, "unused import", "lint"); err != nil { // a duplicate
		t.Fatal(err)
	}
	st, err := h.Status("/root/x")
	if err != nil || !st.Open || st.Parent != "/root" || st.Generation != 1 || len(st.Diagnostics) != 1 ||
		st.Diagnostics[0].Message != "unused import" || st.Diagnostics[0].Source != "lint" ||
		st.Diagnostics[0].At.IsZero() || st.Dropped != (client.Dropped{Duplicate: 1}) {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	list, err := h.List()
	if err != nil || len(list) != 1 || list[0].Path != "/root/x" || list[0].Diagnostics != 1 || list[0].Dropped != (client.Dropped{Duplicate: 1}) {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := h.CloseRuntime("/root/x"); err != nil {
		t.Fatal(err)
	}
	if st, err := h.Status("/root/x"); err != nil || st.Open {
		t.Errorf("after CloseRuntime: %+v, %v", st, err)
	}
	if _, err := client.Dial(s.Socket, rt.Token); !isCode(err, -32003) {
		t.Errorf("hello with the revoked token: %v", err)
	}
}

func TestHostErrors(t *testing.T) {
	s := servetest.Start(t, diagrelay, "", "")
	tok, _ := s.Open("/root/child")
	if _, err := client.DialHost(s.Socket, tok); !errors.Is(err, client.ErrNotHostToken) {
		t.Errorf("DialHost with a child token: %v", err)
	}
	if _, err := client.DialHost(s.Socket, "nope"); !isCode(err, -32001) {
		t.Errorf("DialHost with an unknown token: %v", err)
	}
	h, err := client.DialHost(s.Socket, s.HostToken())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Status("/root/never"); !isCode(err, -32004) {
		t.Errorf("Status of a thread never opened: %v", err)
	}
	if err := h.CloseRuntime("/root/never"); !isCode(err, -32004) {
		t.Errorf("CloseRuntime of a thread never opened: %v", err)
	}
	if _, err := h.Open("/root/a/b", client.OpenOptions{Parent: "/elsewhere"}); !isCode(err, -32602) {
		t.Errorf("Open with a parent that is not the lexical one: %v", err)
	}
	if list, err := h.List(); err != nil || len(list) != 1 {
		t.Errorf("List = %+v, %v", list, err)
	}
}

func isCode(err error, code int) bool {
	e, ok := errors.AsType[*client.Error](err)
	return ok && e.Code == code
}

// Host.Open with Bind: the first process to say hello (this test) owns
// the token, the status and the list show it as the peer, and a process
// this one starts (a descendant) may use the token too. This process was
// the host on the socket as well: the claim closes that connection (a
// bound child's process cannot stay the host), so the status is read on
// serve's stdio, whose host is the parent.
func TestHostOpenBound(t *testing.T) {
	s := servetest.Start(t, diagrelay, "", "")
	h, err := client.DialHost(s.Socket, s.HostToken())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	bind := true
	rt, err := h.Open("/root/bound", client.OpenOptions{Bind: &bind})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(s.Socket, rt.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := h.Status("/root/bound"); err == nil {
		t.Fatal("the claiming process's host connection is still open")
	}
	report := diagrelay("report", "--level", "info", "from a descendant")
	report.Env = append(os.Environ(), s.ChildEnv(rt.Token)...)
	if out, err := report.CombinedOutput(); err != nil {
		t.Fatalf("a descendant's report: %v: %s", err, out)
	}
	var st client.ThreadStatus
	err = s.Host.Call("thread.status", map[string]string{"path": "/root/bound"}, &st)
	if err != nil || st.Peer == nil || st.Peer.PID != os.Getpid() || st.Exited != nil || len(st.Diagnostics) != 1 || st.PeerRefused != 1 {
		t.Fatalf("Status = %+v (peer %+v), %v", st, st.Peer, err)
	}
	var list struct{ Threads []client.ThreadInfo }
	err = s.Host.Call("thread.list", map[string]any{}, &list)
	if err != nil || len(list.Threads) != 1 || list.Threads[0].Peer == nil || list.Threads[0].Peer.PID != os.Getpid() {
		t.Fatalf("List = %+v, %v", list, err)
	}
}
