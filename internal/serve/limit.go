package serve

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// NewLimitHandler returns a slog.Handler that passes at most perSecond
// records to h in any interval of one second of now's clock (nil: the wall
// clock), so that peers cannot flood the terminal the log may be. Records
// over the limit are counted, not written; the next record that passes is
// preceded by one Warn record "suppressed N lines" (it takes one of the
// perSecond places). Handlers made by WithAttrs and WithGroup share the
// limit. perSecond < 1 means 1.
func NewLimitHandler(h slog.Handler, perSecond int, now func() time.Time) slog.Handler {
	if now == nil {
		now = time.Now
	}
	return &limitHandler{h: h, l: &limiter{now: now, times: make([]time.Time, max(perSecond, 1))}}
}

type limitHandler struct {
	h slog.Handler
	l *limiter
}

// limiter keeps the times of the last len(times) records passed, in a ring:
// a record passes when the oldest of them is a second old or more.
type limiter struct {
	now        func() time.Time
	mu         sync.Mutex
	times      []time.Time
	next       int // ring index of the oldest time
	suppressed int
}

// take reports whether a record may pass now, and how many were
// suppressed before it (then one more place is taken for the summary).
func (l *limiter) take() (ok bool, suppressed int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	free := func() bool {
		old := l.times[l.next]
		return old.IsZero() || now.Sub(old) >= time.Second
	}
	use := func() {
		l.times[l.next] = now
		l.next = (l.next + 1) % len(l.times)
	}
	if !free() {
		l.suppressed++
		return false, 0, now
	}
	use()
	if l.suppressed > 0 {
		if !free() { // no place for both: the summary goes first
			suppressed, l.suppressed = l.suppressed, 1 // this record is now suppressed
			return false, suppressed, now
		}
		use()
		suppressed, l.suppressed = l.suppressed, 0
	}
	return true, suppressed, now
}

func (h *limitHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return h.h.Enabled(ctx, lv)
}

func (h *limitHandler) Handle(ctx context.Context, r slog.Record) error {
	ok, suppressed, at := h.l.take()
	if suppressed > 0 {
		sum := slog.NewRecord(at, slog.LevelWarn, fmt.Sprintf("suppressed %d lines", suppressed), 0)
		if err := h.h.Handle(ctx, sum); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	return h.h.Handle(ctx, r)
}

func (h *limitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &limitHandler{h: h.h.WithAttrs(as), l: h.l}
}

func (h *limitHandler) WithGroup(name string) slog.Handler {
	return &limitHandler{h: h.h.WithGroup(name), l: h.l}
}
