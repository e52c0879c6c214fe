package serve_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/serve"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestLimitHandler(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var out bytes.Buffer
	log := slog.New(serve.NewLimitHandler(slog.NewTextHandler(&out, nil), 10, clock.now))
	for i := range 100 {
		log.Info("line", "i", i)
	}
	if got := lines(out.String()); len(got) != 10 {
		t.Fatalf("%d lines in one instant, want 10:\n%s", len(got), out.String())
	}
	clock.add(999 * time.Millisecond)
	log.Info("still inside the second")
	if got := lines(out.String()); len(got) != 10 {
		t.Fatalf("a line passed before the second was over:\n%s", out.String())
	}
	clock.add(time.Millisecond)
	log.With("k", "v").Info("after")
	got := lines(out.String())
	if len(got) != 12 || !strings.Contains(got[10], `msg="suppressed 91 lines"`) || !strings.Contains(got[11], "after") {
		t.Fatalf("want the summary then the line:\n%s", out.String())
	}
}

func ExampleNewLimitHandler() {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return at }
	plain := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	log := slog.New(serve.NewLimitHandler(plain, 2, now))
	for i := range 5 {
		log.Info(fmt.Sprint("peer ", i))
	}
	at = at.Add(time.Second)
	log.Info("later")
	// Output:
	// level=INFO msg="peer 0"
	// level=INFO msg="peer 1"
	// level=WARN msg="suppressed 3 lines"
	// level=INFO msg=later
}
