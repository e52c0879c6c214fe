package diag

import (
	"fmt"
	"strings"
	"time"
)

// refGate is the brute-force reference for Gate: it keeps every delivery and
// applies the rules of the package documentation literally.
type refGate struct {
	delivered []refDelivery
	started   bool
	latest    time.Duration // latest now seen, since the test's origin
	counts    Counts
}

type refDelivery struct {
	at time.Duration
	r  Report
}

func (m *refGate) admit(r Report, at time.Duration) Verdict {
	backwards := m.started && at < m.latest
	if !m.started || at > m.latest {
		m.started, m.latest = true, at
	}
	v := m.decide(r, at, backwards)
	switch v {
	case Delivered:
		m.delivered = append(m.delivered, refDelivery{at, r})
		m.counts.Delivered++
	case DropDuplicate:
		m.counts.Duplicate++
	case DropCap:
		m.counts.Cap++
	case DropRate:
		m.counts.Rate++
	case DropInvalid:
		m.counts.Invalid++
	}
	return v
}

func (m *refGate) decide(r Report, at time.Duration, backwards bool) Verdict {
	switch r.Level {
	case "info", "warning", "error":
	default:
		return DropInvalid
	}
	if strings.TrimSpace(r.Message) == "" || len(r.Message) > 3*1000 || len(r.Source) > 3*80 {
		return DropInvalid
	}
	for _, d := range m.delivered {
		if d.r == r {
			return DropDuplicate
		}
	}
	if len(m.delivered) >= 20 {
		return DropCap
	}
	if backwards {
		return DropRate
	}
	inWindow := 0 // delivered in (at-10s, at]
	for _, d := range m.delivered {
		if d.at > at-10*time.Second && d.at <= at {
			inWindow++
		}
	}
	if inWindow >= 5 {
		return DropRate
	}
	return Delivered
}

// checkInvariants checks what must hold of any run, whatever the model says:
// the deliveries in log (times since origin, in call order) respect every
// limit, and the counters add up to the calls.
func checkInvariants(log []refDelivery, c Counts, calls int) error {
	if len(log) > 20 {
		return fmt.Errorf("%d delivered, cap is 20", len(log))
	}
	for i, d := range log {
		if i > 0 && d.at < log[i-1].at {
			return fmt.Errorf("delivery %d at %v is before delivery %d at %v", i, d.at, i-1, log[i-1].at)
		}
		n := 0
		for _, e := range log {
			if e.at >= d.at && e.at < d.at+10*time.Second {
				n++
			}
		}
		if n > 5 {
			return fmt.Errorf("%d delivered in [%v, %v)", n, d.at, d.at+10*time.Second)
		}
		for _, e := range log[:i] {
			if e.r == d.r {
				return fmt.Errorf("%+v delivered twice", d.r)
			}
		}
	}
	if c.Delivered != uint64(len(log)) {
		return fmt.Errorf("Counts().Delivered = %d, delivered %d", c.Delivered, len(log))
	}
	if c.Total() != uint64(calls) {
		return fmt.Errorf("counts %+v add up to %d, want %d calls", c, c.Total(), calls)
	}
	return nil
}

// gateRun drives a Gate and the reference side by side.
type gateRun struct {
	gate   *Gate
	ref    refGate
	origin time.Time
	at     time.Duration // the test clock, since origin
	log    []refDelivery // what the Gate delivered
	calls  int
}

func newGateRun(origin time.Time) *gateRun {
	return &gateRun{gate: NewGate(), origin: origin}
}

// step moves the test clock by d (which may be negative) and admits r,
// returning an error if the Gate and the reference disagree.
func (g *gateRun) step(d time.Duration, r Report) error {
	g.at += d
	g.calls++
	got := g.gate.Admit(r, g.origin.Add(g.at))
	want := g.ref.admit(r, g.at)
	if got != want {
		return fmt.Errorf("call %d: Admit(%+v, origin%+v) = %v, reference says %v", g.calls, r, g.at, got, want)
	}
	if got == Delivered {
		g.log = append(g.log, refDelivery{g.at, r})
	}
	if c := g.gate.Counts(); c != g.ref.counts {
		return fmt.Errorf("call %d: Counts() = %+v, reference %+v", g.calls, c, g.ref.counts)
	}
	return nil
}

// toEdge returns the step that brings the test clock to offset after the
// window edge: Window after the delivery MaxPerWindow back, the moment it
// leaves the window. With fewer deliveries it returns 0.
func (g *gateRun) toEdge(offset time.Duration) time.Duration {
	n := len(g.log)
	if n < MaxPerWindow {
		return 0
	}
	return g.log[n-MaxPerWindow].at + Window + offset - g.at
}

// edgeOffsets are the offsets from the window edge worth testing.
var edgeOffsets = []time.Duration{0, -time.Nanosecond, time.Nanosecond, -time.Millisecond}

func (g *gateRun) check() error {
	return checkInvariants(g.log, g.gate.Counts(), g.calls)
}

// reportPool is what the property and fuzz tests draw from: a few reports
// that differ only in level or source (so duplicates and near-duplicates are
// common), enough distinct ones to reach the cap, and invalid ones.
var reportPool = func() []Report {
	pool := []Report{
		{Info, "build ok", ""},
		{Warning, "build ok", ""},
		{Info, "build ok", "lint"},
		{Error, "build ok", "lint"},
		{Info, "build ko", "lint"},
		{Warning, "x", "a"},
		// Same filter key (length, first and last 8 bytes), different text.
		{Info, "same head 1 same tail", "lint"},
		{Info, "same head 2 same tail", "lint"},
		{Info, "same head 1 same tail", "lent"},
		// invalid
		{"warn", "x", ""},
		{"Info", "x", ""},
		{"", "x", ""},
		{"info ", "x", ""},
		{Info, "", ""},
		{Info, " \t\u3000", "lint"},
		{Info, strings.Repeat("m", 3001), ""},
		{Info, "x", strings.Repeat("s", 241)},
	}
	for i := range 24 {
		pool = append(pool, Report{Error, fmt.Sprintf("distinct %02d", i), "gen"})
	}
	return pool
}()

// smallPool is the first few entries of reportPool: drawing from it makes
// duplicates likely.
const smallPool = 9
