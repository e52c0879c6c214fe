package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/datadir"
)

// mailbox check on a clean mailbox: exit 0, per-recipient counts, and the
// file not changed, not even its modification time; while serve holds the
// file it fails clearly instead of waiting forever; usage errors exit 2.
func TestMailboxCheckCommand(t *testing.T) {
	data := mailboxWith(t, "a", "b")
	path := filepath.Join(data, datadir.MailboxFile)
	before, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	time.Sleep(10 * time.Millisecond) // a write now would show in the mtime

	r := runDiagrelay(t, nil, "", "mailbox", "check", "--data", data)
	wantExit(t, "mailbox check", r, 0, "")
	for _, has := range []string{"mailbox " + path + "\n", "bbolt consistency check: passed", "/root", "result: clean: 2 messages in 1 mailboxes\n"} {
		if !strings.Contains(r.stdout, has) {
			t.Errorf("output lacks %q:\n%s", has, r.stdout)
		}
	}
	lines := strings.Split(r.stdout, "\n")
	for i, l := range lines {
		if strings.Contains(l, "recipient") {
			if f := strings.Fields(l); strings.Join(f, " ") != "recipient unacknowledged damaged unchecked" {
				t.Errorf("header %q", l)
			}
			if f := strings.Fields(lines[i+1]); strings.Join(f, " ") != "/root 2 0 0" {
				t.Errorf("row %q", lines[i+1])
			}
		}
	}
	after, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("mailbox check changed the file")
	}

	s := startServer(t, data, "")
	r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", data, "--wait", "100ms")
	wantExit(t, "mailbox check while serve runs", r, 1, "in use, most likely by a running diagrelay serve")
	if _, err := s.host.call("capabilities.probe", nil); err != nil {
		t.Errorf("serve after the check: %v", err)
	}
	s.stop(syscall.SIGTERM)

	loose := shortTempDir(t)
	os.Chmod(loose, 0o755)
	os.Rename(path, filepath.Join(loose, datadir.MailboxFile))
	r = runDiagrelay(t, nil, "", "mailbox", "check", "--data", loose)
	wantExit(t, "mailbox check of a loose directory", r, 0, "")
	if !strings.Contains(r.stdout, "warning: serve will refuse this directory") || !strings.Contains(r.stdout, "chmod 700 "+loose) {
		t.Errorf("no warning about the mode:\n%s", r.stdout)
	}

	for _, c := range []struct {
		args []string
		code int
		has  string
	}{
		{[]string{"mailbox"}, 2, "usage: diagrelay mailbox check"},
		{[]string{"mailbox", "repair"}, 2, "usage"},
		{[]string{"mailbox", "check", "now"}, 2, `unexpected argument "now"`},
		{[]string{"mailbox", "check", "--dta", data}, 2, "dta"},
		{[]string{"mailbox", "check", "--wait", "soon"}, 2, "soon"},
		{[]string{"mailbox", "--help"}, 0, "usage"},
		{[]string{"mailbox", "check", "--data", filepath.Join(data, "nothing")}, 1, "no such file"},
	} {
		wantExit(t, strings.Join(c.args, " "), runDiagrelay(t, nil, "", c.args...), c.code, c.has)
	}
}
