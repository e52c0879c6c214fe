// Package testutil holds the small helpers the module's tests share.
package testutil

import (
	"os"
	"testing"
	"time"
)

// ShortTempDir returns a fresh directory under the system temp dir, removed
// at cleanup. t.TempDir's long names can overflow sun_path (about 100
// bytes) once a socket name is added.
func ShortTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Within fails the test instead of hanging when f does not return within
// d: a deadlock would otherwise block go test until its global timeout.
func Within(t testing.TB, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not return within %v (deadlock?)", d)
	}
}

// Eventually polls cond until it holds, and fails the test naming what
// did not happen when it does not within d. The first polls come quickly
// and then every 10 ms at most, so a condition that is already true or
// soon true costs no fixed sleep, and a slow machine only waits longer.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyShow(t, d, cond, func() string { return what })
}

// EventuallyShow is Eventually whose message is made when it fails, so it
// can show what cond saw last (a screen, a count), not only what it wanted.
func EventuallyShow(t testing.TB, d time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for wait := 100 * time.Microsecond; !cond(); wait = min(2*wait, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what())
		}
		time.Sleep(wait)
	}
}

// SkipSystem skips a system test under go test -short: one that runs a
// real diagrelay process, tmux or pi. The unit tests stay; CI runs both.
func SkipSystem(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a system test (it runs real processes): run it without -short")
	}
}

// LintReport is a typical JSON-bridge report payload: diag's and relay's
// parse benchmarks both take it, so that their figures compare.
func LintReport() map[string]any {
	return map[string]any{
		"level":   "warning",
		"message": "lint: 12 problems in internal/relay/deliver.go, see the report",
		"source":  "golangci-lint",
	}
}
