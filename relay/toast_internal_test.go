package relay

import (
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/simclock"
)

// The toast limiter stands alone: its own clock, timers and emit func, no
// Manager. Burst 2 at 1/s: the third is held, and its summary comes from
// the timer when a token is free, at the most severe held level.
func TestToastLimiterAlone(t *testing.T) {
	c := simclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var shown []Notification
	l := newToastLimiter(rate.Limit(1), 2, c.Now, c.AfterFunc, func(n Notification) { shown = append(shown, n) }, nil)
	for _, lv := range []diag.Level{diag.Info, diag.Info, diag.Error, diag.Warning} {
		l.offer(Notification{Thread: "/root/a", Text: string(lv), Level: lv}, c.Now())
	}
	if len(shown) != 2 {
		t.Fatalf("shown %d before the timer, want 2", len(shown))
	}
	if p := c.Pending(); len(p) != 1 || p[0] != time.Second {
		t.Fatalf("timers %v, want one of 1s", p)
	}
	c.Advance(time.Second)
	if len(shown) != 3 || shown[2].Thread != "" || shown[2].Level != diag.Error || shown[2].Text != summaryText(2) {
		t.Fatalf("after 1s: %+v", shown)
	}
	l.stop()
	l.offer(Notification{Thread: "/root/a", Level: diag.Info}, c.Now()) // no token: held
	if p := c.Pending(); len(p) != 0 {
		t.Errorf("a stopped limiter set a timer: %v", p)
	}
}
