package diag

import (
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// The limits of one Gate, that is of one child runtime generation.
const (
	// MaxPerWindow is the most reports delivered in any half-open window
	// [t, t+Window).
	MaxPerWindow = 5
	// Window is the length of the sliding rate window.
	Window = 10 * time.Second
	// MaxPerGeneration is the most reports one Gate ever delivers.
	MaxPerGeneration = 20
)

// Verdict is what a Gate decided about one report.
type Verdict uint8

// The zero Verdict is none of these, so a forgotten assignment never reads
// as Delivered.
const (
	Delivered     Verdict = iota + 1 // pass it on
	DropDuplicate                    // same (level, source, message) as a delivered report
	DropRate                         // the window is full, or the clock went backwards
	DropCap                          // MaxPerGeneration already delivered
	DropInvalid                      // not a valid report (see Gate.Admit)
)

var verdictNames = [...]string{
	Delivered:     "delivered",
	DropDuplicate: "duplicate",
	DropRate:      "rate",
	DropCap:       "cap",
	DropInvalid:   "invalid",
}

// String returns "delivered", "duplicate", "rate", "cap" or "invalid": the
// names the thread status uses for its drop counters.
func (v Verdict) String() string {
	if v >= Delivered && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Counts is how many reports a Gate decided, by verdict: the drops are
// its embedded Dropped.
type Counts struct {
	Delivered uint64
	Dropped
}

// Total is the number of reports decided: calls to Admit.
func (c Counts) Total() uint64 { return c.Delivered + c.Dropped.Total() }

// A Gate decides, for one child runtime generation, which reports are
// delivered: see the package documentation for the exact rules. A reopened
// runtime gets a new Gate.
//
// A Gate is not safe for concurrent use: the caller serializes calls to its
// methods per runtime (the relay does), as one serializes use of a
// bufio.Writer. Leaving the lock out keeps the drop path a few comparisons
// long.
//
// Its size is fixed (see BenchmarkGateMemory): it keeps the delivered
// reports' strings, not copies of their text, and no maps or slices.
type Gate struct {
	// Times are durations since origin, the first now seen, so that
	// monotonic readings are compared as time.Time.Sub compares them while
	// each stored time costs 8 bytes instead of 24.
	origin  time.Time
	latest  time.Duration                   // the latest now seen, since origin
	recent  [MaxPerWindow]time.Duration     // ring: delivery i is at recent[i%MaxPerWindow]
	seen    [2]uint64                       // bit key>>25 set per delivered key: clear means new
	key     [MaxPerGeneration]uint32        // delivered reports, in delivery order: keyOf(report)
	texts   []gateText                      // and their texts, grown as delivered
	n       uint8                           // delivered so far, <= MaxPerGeneration
	started bool                            // origin and latest are set
	drops   [DropInvalid - Delivered]uint64 // indexed by Verdict - DropDuplicate
}

// gateText is a delivered report's texts, for the duplicate check.
type gateText struct{ message, source string }

// NewGate returns a Gate that has delivered nothing.
func NewGate() *Gate { return new(Gate) }

// Admit decides about r, which arrives at now, and records the decision. The
// checks run in this order and the first that fails decides:
//
//  1. valid: r.Level is exactly Info, Warning or Error, r.Message is not
//     blank, and neither text is longer in bytes than the sanitizer can
//     produce (3000 bytes of message, 240 of source); else DropInvalid.
//  2. not a duplicate: no report with the same level, source and message was
//     delivered by this Gate; else DropDuplicate.
//  3. under the cap: fewer than MaxPerGeneration were delivered; else DropCap.
//  4. the window has room: fewer than MaxPerWindow were delivered in
//     (now-Window, now], and now is not before the latest now this Gate has
//     seen; else DropRate.
//
// Then r is delivered and remembered, and Admit returns Delivered. Dropped
// reports are only counted: a report dropped by rate can be delivered later.
//
// Admit expects r to come from Parse: it does not sanitize again (that
// would cost the drop path its speed), it only re-checks the cheap rules of
// step 1. It keeps r's strings for the duplicate check.
//
// now should be a reading of one monotonic clock, such as time.Now or an
// injected fake; readings are compared with time.Time.Sub, so monotonic
// readings are used when both times carry one. A now before the latest now
// seen (by any earlier Admit, whatever its verdict) means the clock went
// backwards: the Gate fails closed, treating the window as full (DropRate)
// until the clock is back at the latest reading; it never moves its clock
// backwards.
func (g *Gate) Admit(r Report, now time.Time) Verdict {
	backwards := g.observe(now)
	lv := r.Level.code()
	if lv == 0 || len(r.Message) > maxMessageBytes || len(r.Source) > maxSourceBytes || blank(r.Message) {
		return g.drop(DropInvalid)
	}
	key := keyOf(lv, r.Message, r.Source)
	bit := key >> 25
	if g.seen[bit/64]&(1<<(bit%64)) != 0 { // most new reports skip the scan
		for i, k := range g.key[:g.n] {
			if k == key && g.texts[i].message == r.Message && g.texts[i].source == r.Source {
				return g.drop(DropDuplicate)
			}
		}
	}
	if g.n >= MaxPerGeneration {
		return g.drop(DropCap)
	}
	slot := g.n % MaxPerWindow
	if backwards || (g.n >= MaxPerWindow && g.latest-g.recent[slot] < Window) {
		return g.drop(DropRate)
	}
	g.recent[slot] = g.latest
	if len(g.texts) == cap(g.texts) {
		// Room for one, then a window's, then a generation's: most
		// runtimes deliver a report or two, and a Gate is kept per open
		// thread.
		next := MaxPerGeneration
		switch {
		case cap(g.texts) == 0:
			next = 1
		case cap(g.texts) < MaxPerWindow:
			next = MaxPerWindow
		}
		g.texts = append(make([]gateText, 0, next), g.texts...)
	}
	g.texts = append(g.texts, gateText{r.Message, r.Source})
	g.key[g.n] = key
	g.seen[bit/64] |= 1 << (bit % 64)
	g.n++
	return Delivered
}

// keyOf returns a report's filter key: its level, its texts' lengths and a
// mix of its message's first and last 8 bytes. Equal reports have equal
// keys, and reports with equal keys are compared in full, so the key only
// makes the duplicate check cheap: a few loads instead of comparing the
// report with each delivered one, whatever its length. Reports crafted to
// share keys cost at most MaxPerGeneration comparisons each, less than
// sanitizing them did.
func keyOf(lv levelCode, message, source string) uint32 {
	h := uint64(len(message))<<16 | uint64(len(source))<<2 | uint64(lv)
	if len(message) >= 8 {
		h = (h ^ load64(message)) * 0x9e3779b97f4a7c15
		h = (h ^ load64(message[len(message)-8:])) * 0xbf58476d1ce4e5b9
	} else {
		for i := range len(message) {
			h = (h ^ uint64(message[i])) * 0x9e3779b97f4a7c15
		}
	}
	return uint32(h>>32)&^3 | uint32(lv)
}

// load64 returns the first 8 bytes of s, which has at least 8, little-endian.
func load64(s string) uint64 {
	s = s[:8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// observe moves the Gate's clock forward to now and reports whether now is
// before the latest reading, which leaves the clock where it was.
func (g *Gate) observe(now time.Time) (backwards bool) {
	if !g.started {
		g.origin, g.started = now, true
		return false
	}
	d := now.Sub(g.origin) // saturates instead of overflowing
	if d < g.latest {
		return true
	}
	g.latest = d
	return false
}

// Forget makes r, a report this Gate delivered, no longer a duplicate, and
// reports whether it found it. The caller uses it when r's delivery failed
// (its mailbox write, say), so that the child's retry is delivered rather
// than dropped as a duplicate of something the parent never got. r keeps
// its window slot and its place under the cap: forgetting never lets more
// through in a window or a generation. Counts is unchanged.
func (g *Gate) Forget(r Report) bool {
	lv := r.Level.code()
	if lv == 0 {
		return false
	}
	key := keyOf(lv, r.Message, r.Source)
	for i, k := range g.key[:g.n] {
		if k == key && g.texts[i].message == r.Message && g.texts[i].source == r.Source {
			// A key's low bits hold its level, never 0 for a valid report,
			// so this key matches nothing again. The filter bit may stay:
			// it only decides whether to scan.
			g.key[i] = 0
			g.texts[i] = gateText{}
			return true
		}
	}
	return false
}

func (g *Gate) drop(v Verdict) Verdict {
	g.drops[v-DropDuplicate]++
	return v
}

// Counts returns how many reports g has decided, by verdict.
func (g *Gate) Counts() Counts {
	return Counts{Delivered: uint64(g.n), Dropped: Dropped{
		Duplicate: g.drops[DropDuplicate-DropDuplicate],
		Rate:      g.drops[DropRate-DropDuplicate],
		Cap:       g.drops[DropCap-DropDuplicate],
		Invalid:   g.drops[DropInvalid-DropDuplicate],
	}}
}

// blank reports whether s is empty or only white space (unicode.IsSpace).
// It stops at the first other rune, so it is cheap for the sanitized
// messages Admit expects, which start with one.
func blank(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			return false
		}
		i += n
	}
	return true
}
