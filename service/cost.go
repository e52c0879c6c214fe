package service

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/peercred"
)

// Fairness by cost (service/doc.go, "No child can slow another"). A
// connection is charged, in bytes, for what serving it costs: every byte
// read and every read system call, every frame handled, every byte of its
// replies, and every byte of report text the sanitizer goes through. The
// charge goes to a bucket: a child token's, shared by its connections; a
// pending peer's own; none for a host. A connection whose bucket is
// overdrawn waits, off the scheduler, before its next read and before its
// next frame, whatever it sends, until the bucket refills.
const (
	// CostPerFrame is a frame's fixed cost beyond its bytes: decoding the
	// envelope, dispatch, encoding the reply, the scheduler.
	CostPerFrame = 256
	// CostPerRead is one read system call: a peer that writes its frames
	// a few bytes at a time pays for the calls it makes the server do.
	CostPerRead = 1024
	// DefaultCostRate and DefaultCostBurst are a child token's share
	// (Config.CostRate, Config.CostBurst): about 7 probes a second read
	// one at a time (more when they arrive together), or a full 64 KiB
	// report every 9 s. The burst is four frames' bytes, so the costliest
	// frame a child can send (a 64 KiB report, read and sanitized: about
	// 145 KiB of work) never waits on an idle share, nor does an
	// extension's burst of a few hundred small reports. A well-behaved
	// child (5 reports in 10 s) uses a few percent of it; 64 children
	// flooding at their share keep the server under a tenth of a core.
	DefaultCostRate  = 16 << 10
	DefaultCostBurst = 4 * jsonframe.MaxFrame
	// A pending peer's share is an eighth of a child's: a hello and some,
	// never a flood before its token is known.
	pendingCostShare = 8
)

// costBucket is a token bucket of bytes of work. It may be overdrawn: a
// charge is known only once the work is done, and the next read waits
// until the debt is paid back.
type costBucket struct {
	rate, burst float64 // bytes per second, bytes

	mu    sync.Mutex
	level float64 // credit; negative while overdrawn
	last  time.Time
}

func newCostBucket(rate, burst float64, now time.Time) *costBucket {
	return &costBucket{rate: rate, burst: burst, level: burst, last: now}
}

func (b *costBucket) refillLocked(now time.Time) {
	if dt := now.Sub(b.last); dt > 0 {
		b.level = min(b.burst, b.level+dt.Seconds()*b.rate)
		b.last = now
	}
}

// charge takes n bytes of work.
func (b *costBucket) charge(now time.Time, n int) {
	b.mu.Lock()
	b.refillLocked(now)
	b.level -= float64(n)
	b.mu.Unlock()
}

// debt is how long until the bucket is no longer overdrawn.
func (b *costBucket) debt(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	if b.level >= 0 {
		return 0
	}
	return time.Duration(-b.level / b.rate * float64(time.Second))
}

// bucket is the bucket c is charged to now: its child token's, its own
// while pending, none for a host. Loop goroutine only.
func (c *conn) bucket() *costBucket {
	switch {
	case c.child != nil:
		return c.child.cost
	case c.auth() == stateHost:
		return nil
	}
	return c.ownCost
}

// charge bills n bytes of work to c. Loop goroutine only.
func (c *conn) charge(n int) {
	if b := c.bucket(); b != nil {
		b.charge(c.s.now(), n)
	}
}

// throttle waits while c's bucket is overdrawn, or until the connection
// ends, and reports whether it waited. Loop goroutine only; it holds no
// scheduler slot.
func (c *conn) throttle() (waited bool) {
	for {
		b := c.bucket()
		if b == nil {
			return waited
		}
		d := b.debt(c.s.now())
		if d <= 0 || c.revoked() || c.isGone() || c.isShutting() {
			return waited
		}
		// In slices, looking between them for a peer that left: a paced
		// connection whose peer is gone is dropped, not waited out.
		if c.nc != nil && peercred.Gone(c.nc) {
			c.kill()
			return waited
		}
		c.wait(min(d, throttleSlice))
		waited = true
	}
}

// inputReady waits, without a read buffer, until the socket has bytes or
// has ended (frameReader's ready); a peer found gone is disconnected, its
// unread frames dropped, as meteredReader would.
func (c *conn) inputReady() error {
	gone, err := c.waitInput()
	if err != nil {
		return err
	}
	if gone {
		c.kill()
		return errPeerGone
	}
	c.polled = true
	return nil
}

// throttleSlice is the longest a throttled connection waits before it
// looks again whether its peer is still there.
const throttleSlice = 100 * time.Millisecond

// errPeerGone ends a connection whose peer closed its end.
var errPeerGone = errors.New("service: the peer is gone")

// meteredReader is a connection's input: each read waits for the
// connection's share, is charged, and is refused once the peer is gone
// (peerGone), so frames a departed peer left in the socket are dropped
// unread.
type meteredReader struct {
	c *conn
	r io.Reader
}

func (m meteredReader) Read(p []byte) (int, error) {
	waited := m.c.throttle()
	polled := m.c.polled && !waited // inputReady has just looked
	m.c.polled = false
	if m.c.nc != nil && !polled && peercred.Gone(m.c.nc) {
		m.c.kill()
		return 0, errPeerGone
	}
	n, err := m.r.Read(p)
	m.c.charge(n + CostPerRead)
	return n, err
}
