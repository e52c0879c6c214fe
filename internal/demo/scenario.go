package demo

// The demo's scenario: a parent session /root with children, a grandchild
// and an independent root, whose extensions behave well, flood, or attack.
// Every step happens at a fixed instant of the simulated clock.

import (
	"fmt"
	"strings"
	"time"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/capability/busprobe"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/simclock"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/threadpath"
)

// The threads of the demo, in the order they are opened.
var children = []Thread{
	{Path: "/root/scout", Role: "well-behaved: probes, reports a missing tool; reopened at +60s"},
	{Path: "/root/scout/lint", Role: "grandchild; a shutdown hook reports at +50s"},
	{Path: "/root/noisy", Role: "floods: bursts of reports and repeats; reopened at +70s"},
	{Path: "/root/hostile", Role: "hostile: escapes, Bidi, smuggling, 10 MiB, bad types, forgery"},
	{Path: "/root/leaky", Role: "careless: pastes a GitHub token into its report"},
	{Path: "/k", Owner: threadpath.Root, Role: "independent root created by /root"},
	{Path: "/k/l", Role: "child of the independent root"},
}

type scenario struct {
	mode   relay.Mode
	clock  *simclock.Clock
	sinks  *recorder
	mgr    *relay.Manager
	parent *bus.Bus // the parent session's own bus
	rt     map[string]*relay.Runtime
	tr     *Transcript
	// posts holds, per event index, the posted messages its reports made.
	posts map[int][]int
}

// Run plays the scenario with the parent session in mode and returns what
// the parent saw.
func Run(mode relay.Mode) (*Transcript, error) {
	clock := simclock.New(Start)
	sinks := &recorder{clock: clock, box: mailbox.NewMemory()}
	parent := bus.New()
	d := &scenario{
		mode:   mode,
		posts:  make(map[int][]int),
		clock:  clock,
		sinks:  sinks,
		parent: parent,
		rt:     make(map[string]*relay.Runtime),
		tr: &Transcript{
			Mode: string(mode),
			Limits: Limits{
				WindowReports:   diag.MaxPerWindow,
				WindowMS:        diag.Window.Milliseconds(),
				CapPerRuntime:   diag.MaxPerGeneration,
				StatusKeeps:     relay.MaxStatusDiagnostics,
				NotifyPerSecond: float64(relay.DefaultNotifyRate),
				NotifyBurst:     relay.DefaultNotifyBurst,
			},
		},
	}
	d.mgr = relay.NewManager(relay.Config{
		Mode:        mode,
		Notifier:    sinks,
		Mailbox:     sinks,
		Parent:      parent,
		Now:         clock.Now,
		AfterFunc:   clock.AfterFunc,
		OnSinkError: sinks.sinkError,
		// NotifyRate and NotifyBurst: the embedded defaults.
	})
	defer d.mgr.Close()

	d.tr.Threads = append(d.tr.Threads, Thread{
		Path: threadpath.Root, Role: "the parent session; its bus answers the capabilities probe",
	})

	d.at(0)
	d.parentProbes()
	d.topLevelSession()
	if err := d.openChildren(); err != nil {
		return nil, err
	}

	// The well-behaved reports, a tenth of a second apart.
	for i, r := range []struct {
		path                  string
		level                 diag.Level
		message, source, what string
	}{
		{"/root/scout", diag.Warning, "eslint not found on PATH; lint checks skipped", "lint", "extension loads, probes, and reports a missing tool"},
		{"/root/scout/lint", diag.Info, "checked 42 files: 3 style warnings", "eslint", "grandchild reports to its parent /root/scout"},
		{"/k", diag.Info, "index rebuilt: 1204 symbols", "indexer", "independent root reports to its owner /root"},
		{"/k/l", diag.Warning, "stale cache entry ignored: go.sum changed", "cache", "child of /k reports to /k"},
		{"/root/leaky", diag.Error, "git push failed: token " + leakedToken + " rejected for acme/api", "git",
			"a careless extension pastes a token; the parent sees [REDACTED:github-pat] (docs/redaction.md)"},
	} {
		d.at(time.Duration(i+1) * 100 * time.Millisecond)
		d.wellBehaved(r.path, r.level, r.message, r.source, r.what)
	}

	// The flood and the attack interleave, as they would in a real session.
	d.at(1 * time.Second)
	d.noisyBurst(1, 8, true, "a burst of 8 distinct reports, then the first 2 again")
	d.at(1500 * time.Millisecond)
	d.log("/root/hostile", "the hostile extension emits without probing; its valid reports come in "+
		"waves of at most 5, so the window lets each through and shows what sanitizing made of it",
		"", "see each payload below", nil)
	d.hostileWave(hostileWave1)
	d.at(10999 * time.Millisecond)
	d.noisyBurst(9, 1, false, "one more, 9.999 s after the first burst: the window still holds 5")
	d.at(11 * time.Second)
	d.noisyBurst(9, 8, true, "exactly 10 s after the first burst; step 9 again (drops are not remembered)")
	d.at(11500 * time.Millisecond)
	d.hostileWave(hostileWave2())
	d.at(21 * time.Second)
	d.noisyBurst(17, 8, true, "another burst")
	d.at(21500 * time.Millisecond)
	d.hostileReentrant()
	d.at(31 * time.Second)
	d.noisyBurst(25, 8, true, "another burst: the 20th delivery reaches the cap")
	d.at(41 * time.Second)
	d.noisyBurst(33, 8, true, "another burst, after the cap")

	d.at(50 * time.Second)
	d.shutdownHook("/root/scout/lint")
	d.at(60 * time.Second)
	if err := d.reopenScout(); err != nil {
		return nil, err
	}
	d.at(70 * time.Second)
	if err := d.reopenNoisy(); err != nil {
		return nil, err
	}

	// Let any held-back notification summary fall due, then read the parent's view.
	d.at(80 * time.Second)
	d.collect()
	d.mgr.Close()
	_, hosted := busprobe.Probe(d.parent, capability.CapabilitiesProbeTopic, capability.DiagnosticSince)
	d.log(threadpath.Root, "the manager closes; an extension in /root probes capabilities again", "",
		hostedText(capability.Capability{}, hosted)+": the manager is no longer enabled", nil)
	return d.tr, nil
}

// at moves the simulated clock to off after the start, running due timers.
func (d *scenario) at(off time.Duration) { d.clock.AdvanceTo(Start.Add(off)) }

func (d *scenario) log(thread, what, sent, result string, t *Tally) *Event {
	d.tr.Events = append(d.tr.Events, Event{
		AtMS: sinceStart(d.clock.Now()), Thread: thread, What: what, Sent: sent, Result: result, Tally: t,
	})
	return &d.tr.Events[len(d.tr.Events)-1]
}

// logReports logs an event that sent reports, with the messages they made.
func (d *scenario) logReports(thread, what, sent, result string, t Tally, tr tracked) {
	e := d.log(thread, what, sent, result, &t)
	d.posts[len(d.tr.Events)-1] = tr.idx
	if t.Delivered == 1 && len(tr.msgs) == 1 {
		m := tr.msgs[0]
		e.Delivered = &Diagnostic{Level: string(m.Level), Source: m.Source, Message: m.Message, AtMS: sinceStart(m.At)}
	}
}

// tracked is what track saw posted for the path it watched.
type tracked struct {
	idx  []int
	msgs []diag.ParentMessage
}

// track runs f, extension code acting on path's bus, and tallies what the
// relay did with the reports f sent: the messages it posted for path and
// the change of path's drop counters.
func (d *scenario) track(path string, f func()) (Tally, tracked) {
	before, _ := d.mgr.Status(path)
	n := d.sinks.postedCount()
	f()
	after, _ := d.mgr.Status(path)
	var mine tracked
	idx, msgs := d.sinks.postedSince(n)
	for i, m := range msgs {
		if m.From == path {
			mine.idx = append(mine.idx, idx[i])
			mine.msgs = append(mine.msgs, m)
		}
	}
	return Tally{
		Delivered: len(mine.msgs),
		Dropped:   after.Dropped.Minus(before.Dropped),
	}, mine
}

// send emits payload on the bus as an extension that skips the probe would,
// and logs what became of it.
func (d *scenario) send(b *bus.Bus, path, what string, payload any) {
	t, posted := d.track(path, func() { b.Emit(diag.Topic, payload) })
	d.logReports(path, what, describePayload(payload), verdictText(t, payload), t, posted)
}

func (d *scenario) parentProbes() {
	c, ok := busprobe.Probe(d.parent, capability.CapabilitiesProbeTopic, capability.DiagnosticSince)
	d.log(threadpath.Root, "an extension in /root probes "+capability.CapabilitiesProbeTopic+
		" (minimum "+capability.DiagnosticSince+")", "", hostedText(c, ok), nil)
	c, ok = busprobe.Probe(d.parent, capability.CapabilitiesProbeTopic, "2.0.0")
	result := hostedText(c, ok)
	if !ok {
		result = "no compatible host (this one is " + capability.Version + "): it keeps its fallback"
	}
	d.log(threadpath.Root, "an extension in /root that needs version 2.0.0 probes", "", result, nil)
}

// topLevelSession runs the well-behaved extension in a normal top-level
// session: a bus that no manager hosts.
func (d *scenario) topLevelSession() {
	top := bus.New()
	defer top.Close()
	hosted := busprobe.Report(top, diag.Warning, "eslint not found on PATH; lint checks skipped", "lint")
	result := "probe: hosted?!"
	if !hosted {
		result = "probe: not hosted (nothing listens); the extension falls back to its own " +
			"ctx.ui.notify / stderr, and nothing reaches /root"
	}
	d.log("top-level", "the same extension in a normal top-level session (no manager)", "", result, nil)
}

func (d *scenario) openChildren() error {
	for _, c := range children {
		rt, err := d.mgr.Open(c.Path, "", c.Owner)
		if err != nil {
			return fmt.Errorf("opening %s: %w", c.Path, err)
		}
		d.rt[c.Path] = rt
		st, _ := d.mgr.Status(c.Path)
		c.Parent, c.ReportsTo = st.Parent, st.Recipient()
		d.tr.Threads = append(d.tr.Threads, c)
	}
	d.log(threadpath.Root, fmt.Sprintf("opens %d child runtimes, each with its own bus; the probe "+
		"responder and the report listener are installed before extensions load", len(children)),
		"", "generation 1 of each", nil)
	return nil
}

// wellBehaved is the original's report() helper in use: probe, then emit.
func (d *scenario) wellBehaved(path string, level diag.Level, message, source, what string) {
	b := d.rt[path].Bus()
	var hosted bool
	t, posted := d.track(path, func() { hosted = busprobe.Report(b, level, message, source) })
	rep := diag.Report{Level: level, Message: message, Source: source}
	result := verdictText(t, rep)
	if !hosted {
		result = "probe: not hosted; fell back to top-level reporting"
	}
	d.logReports(path, what, describePayload(rep), result, t, posted)
}

// leakedToken is the shape of a GitHub token, made up (built here, so no
// credential-shaped literal sits in the source).
var leakedToken = "ghp_" + strings.Repeat("Q2xM9zR4pW", 3) + "7vK3nT"

func noisyReport(step int) diag.Report {
	return diag.Report{Level: diag.Info, Source: "build", Message: fmt.Sprintf("progress: step %d of 43", step)}
}

// noisyBurst sends steps first..first+n-1 and, if repeat, the first two of
// them again.
func (d *scenario) noisyBurst(first, n int, repeat bool, what string) {
	const path = "/root/noisy"
	b := d.rt[path].Bus()
	t, posted := d.track(path, func() {
		for i := first; i < first+n; i++ {
			b.Emit(diag.Topic, noisyReport(i))
		}
		if repeat {
			b.Emit(diag.Topic, noisyReport(first))
			b.Emit(diag.Topic, noisyReport(first+1))
		}
	})
	sent := fmt.Sprintf("info [build] \"progress: step %d of 43\"", first)
	if n > 1 {
		sent = fmt.Sprintf("info [build] \"progress: step N of 43\" for N = %d..%d", first, first+n-1)
	}
	if repeat {
		sent += fmt.Sprintf(", then %d, %d again", first, first+1)
	}
	d.logReports(path, what, sent, tallyText(t), t, posted)
}

func (d *scenario) hostileWave(wave []hostilePayload) {
	b := d.rt["/root/hostile"].Bus()
	for _, p := range wave {
		d.send(b, "/root/hostile", p.what, p.payload)
	}
}

// hostileReentrant reports from inside the probe's respond callback: the
// report is emitted on the same bus while the probe's Emit is running.
func (d *scenario) hostileReentrant() {
	const path = "/root/hostile"
	b := d.rt[path].Bus()
	rep := diag.Report{Level: diag.Warning, Source: "reentrant", Message: "reported from inside respond()"}
	var answered bool
	t, posted := d.track(path, func() {
		b.Emit(capability.DiagnosticProbeTopic, capability.ProbeRequest{Respond: func(any) {
			answered = true
			b.Emit(diag.Topic, rep)
		}})
	})
	result := verdictText(t, rep)
	if !answered {
		result = "the probe was not answered"
	}
	d.logReports(path, "a report emitted from inside the probe's respond callback", describePayload(rep), result, t, posted)
}

// shutdownHook reports from the child's shutdown hook, then closes the
// runtime; a report after Close finds no host.
func (d *scenario) shutdownHook(path string) {
	rt := d.rt[path]
	d.wellBehaved(path, diag.Info, "shutdown: lint cache flushed", "eslint",
		"its shutdown hook reports, before the runtime closes")
	rt.Close()
	d.lateReport(path, rt.Bus(), diag.Info, "one more after close", "eslint",
		"runtime closed; a late timer in the extension tries to report",
		"probe: not hosted (the runtime is closed); the extension falls back")
}

// lateReport logs an extension reporting on a bus that no longer has a
// host: the probe must say not hosted, so nothing is emitted or counted.
func (d *scenario) lateReport(path string, b *bus.Bus, level diag.Level, message, source, doing, notHosted string) {
	var hosted bool
	t, posted := d.track(path, func() {
		hosted = busprobe.Report(b, level, message, source)
	})
	result := notHosted
	if hosted {
		result = "probe: hosted?! " + tallyText(t)
	}
	d.logReports(path, doing, "", result, t, posted)
}

func (d *scenario) reopenScout() error {
	const path = "/root/scout"
	old := d.rt[path]
	rt, err := old.Reopen()
	if err != nil {
		return fmt.Errorf("reopening %s: %w", path, err)
	}
	d.rt[path] = rt
	d.log(path, "the retained session is opened again", "",
		fmt.Sprintf("generation %d: a new bus and fresh limits; its diagnostics stay", rt.Generation()), nil)
	d.lateReport(path, old.Bus(), diag.Warning, "late report from generation 1", "lint",
		"generation 1's extension, still running, tries to report",
		"probe: not hosted (its bus closed at the reopen): ignored, not counted")
	d.wellBehaved(path, diag.Warning, "eslint not found on PATH; lint checks skipped", "lint",
		"generation 2's extension loads and reports the same warning (not a duplicate: fresh limits)")
	return nil
}

func (d *scenario) reopenNoisy() error {
	const path = "/root/noisy"
	rt, err := d.rt[path].Reopen()
	if err != nil {
		return fmt.Errorf("reopening %s: %w", path, err)
	}
	d.rt[path] = rt
	d.log(path, "the flooding session is opened again", "",
		fmt.Sprintf("generation %d: fresh limits, so the cap no longer applies", rt.Generation()), nil)
	d.noisyBurst(41, 3, false, "3 more reports: the status keeps only the newest 20")
	return nil
}
