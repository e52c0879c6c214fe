package relay

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/diag"
)

// toastLimiter is the host-wide notification limit. Notifications over it
// are counted; when the limit allows again, one summary says how many. The
// summary is the host's, not a child's: it takes no token, so a steady
// flood shows one real notification per token, each preceded by the count
// of those held back since the last, never summaries alone.
//
// It has its own clock and emit func, so it knows nothing of the Manager.
type toastLimiter struct {
	lim       *rate.Limiter
	now       func() time.Time
	afterFunc func(time.Duration, func()) func() bool
	emit      func(Notification)            // called with no lock held
	hold      func(Notification, time.Time) // called with no lock held, may be nil

	mu        sync.Mutex
	held      int        // notifications not shown since the last summary
	worst     diag.Level // the most severe level among them
	scheduled bool       // a summary timer is pending
	stopped   bool
	cancel    func() bool
}

// maxSummaryDelay bounds the timer for a very low rate.
const maxSummaryDelay = time.Hour

func newToastLimiter(r rate.Limit, burst int, now func() time.Time,
	afterFunc func(time.Duration, func()) func() bool, emit func(Notification), hold func(Notification, time.Time)) *toastLimiter {
	return &toastLimiter{lim: rate.NewLimiter(r, burst), now: now, afterFunc: afterFunc, emit: emit, hold: hold}
}

// offer shows n at now if the limit allows, after the summary of those held
// back; else it holds n back and makes sure a summary timer is set.
func (l *toastLimiter) offer(n Notification, now time.Time) {
	l.mu.Lock()
	if l.lim.AllowN(now, 1) {
		sum, ok := l.summaryLocked()
		l.mu.Unlock()
		if ok {
			l.emit(sum)
		}
		l.emit(n)
		return
	}
	l.held++
	if n.Level.Severity() > l.worst.Severity() {
		l.worst = n.Level
	}
	d, schedule := l.timerLocked(now)
	l.mu.Unlock()
	if l.hold != nil {
		l.hold(n, now)
	}
	if schedule {
		l.schedule(d)
	}
}

// summaryLocked returns the summary of the held-back notifications, if any,
// and starts counting again. Its level is the most severe among them, so a
// held-back error is not announced as info.
func (l *toastLimiter) summaryLocked() (Notification, bool) {
	if l.held == 0 {
		return Notification{}, false
	}
	n := Notification{Level: l.worst, Text: summaryText(l.held)}
	l.held, l.worst = 0, ""
	return n, true
}

// timerLocked decides whether to set the summary timer and for how long:
// until the limiter has a token again.
func (l *toastLimiter) timerLocked(now time.Time) (time.Duration, bool) {
	if l.scheduled || l.stopped || l.lim.Limit() == rate.Inf {
		return 0, false
	}
	l.scheduled = true
	missing := 1 - l.lim.TokensAt(now)
	secs := missing / float64(l.lim.Limit())
	d := maxSummaryDelay
	if secs < maxSummaryDelay.Seconds() {
		d = max(time.Duration(secs*float64(time.Second)), time.Millisecond)
	}
	return d, true
}

// schedule sets the timer, with no lock held: AfterFunc is the caller's.
func (l *toastLimiter) schedule(d time.Duration) {
	cancel := l.afterFunc(d, l.flush)
	l.mu.Lock()
	stopped := l.stopped
	if !stopped {
		l.cancel = cancel
	}
	l.mu.Unlock()
	if stopped {
		cancel()
	}
}

// flush shows the summary once the limiter has a token (without taking it),
// or waits again.
func (l *toastLimiter) flush() {
	now := l.now()
	l.mu.Lock()
	l.scheduled = false
	if l.held == 0 || l.stopped {
		l.mu.Unlock()
		return
	}
	if l.lim.TokensAt(now) < 1 {
		d, schedule := l.timerLocked(now)
		l.mu.Unlock()
		if schedule {
			l.schedule(d)
		}
		return
	}
	sum, _ := l.summaryLocked()
	l.mu.Unlock()
	l.emit(sum)
}

// stop cancels a pending summary for good.
func (l *toastLimiter) stop() {
	l.mu.Lock()
	l.stopped = true
	cancel := l.cancel
	l.cancel = nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
