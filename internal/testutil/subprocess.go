package testutil

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Subprocess is this test binary run again as a helper process that runs
// only one test (a helper that reads its environment and is killed, as a
// crash would), its stdout read line by line and its stderr kept.
type Subprocess struct {
	Cmd    *exec.Cmd
	Stdout *bufio.Scanner
	stderr strings.Builder
}

// StartSubprocess starts test (a test name, run alone) with env added to
// this process's environment. It is killed, if still running, when the
// test ends.
func StartSubprocess(t testing.TB, test string, env ...string) *Subprocess {
	t.Helper()
	p := &Subprocess{Cmd: exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")}
	p.Cmd.Env = append(os.Environ(), env...)
	p.Cmd.Stderr = &p.stderr
	out, err := p.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.Stdout = bufio.NewScanner(out)
	t.Cleanup(func() {
		p.Cmd.Process.Kill()
		p.Cmd.Wait()
	})
	return p
}

// Kill sends SIGKILL.
func (p *Subprocess) Kill() { p.Cmd.Process.Kill() }

// WaitKilled waits for the process and fails the test unless SIGKILL
// ended it, with its stderr; Stderr is then complete.
func (p *Subprocess) WaitKilled(t testing.TB) {
	t.Helper()
	err := p.Cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, not by SIGKILL; stderr:\n%s", err, p.stderr.String())
	}
}

// Stderr is what the process wrote to stderr, whole once it was waited for.
func (p *Subprocess) Stderr() string { return p.stderr.String() }
