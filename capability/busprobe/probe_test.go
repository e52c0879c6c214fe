package busprobe

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/testutil"
)

// within fails the test instead of hanging when f does not return in time:
// a deadlock would otherwise block go test until its global timeout.
var within = testutil.Within

// newBus returns a bus on which any handler panic fails the test.
func newBus(t *testing.T) *bus.Bus {
	b := bus.New()
	b.SetPanicHook(func(topic string, v any) { t.Errorf("handler on %q panicked: %v", topic, v) })
	t.Cleanup(b.Close)
	return b
}

// replier answers every probe on topic with the given replies, in order.
func replier(b *bus.Bus, topic string, replies ...any) (off func()) {
	return b.On(topic, func(p any) {
		if r, ok := p.(capability.ProbeRequest); ok {
			for _, reply := range replies {
				r.Respond(reply)
			}
		}
	})
}

func TestDefinitions(t *testing.T) {
	if capability.Protocol != 1 {
		t.Errorf("Protocol = %d", capability.Protocol)
	}
	for _, v := range []string{capability.Version, capability.DiagnosticSince} {
		if err := capability.CheckVersion(v); err != nil || strings.HasPrefix(v, "v") {
			t.Errorf("%q: %v (want a valid version without v)", v, err)
		}
	}
	if _, ok := capability.Compatible(capability.Current(), capability.DiagnosticSince); !ok {
		t.Errorf("this package's own reply %v is older than DiagnosticSince %s", capability.Current(), capability.DiagnosticSince)
	}
	if capability.DiagnosticProbeTopic != "pi-subagent-manager:diagnostic:probe" ||
		capability.CapabilitiesProbeTopic != "pi-subagent-manager:capabilities:probe" {
		t.Error("topic names differ from the original's")
	}
}

func TestProbeWithoutHost(t *testing.T) {
	b := newBus(t)
	if c, ok := Probe(b, capability.DiagnosticProbeTopic, ""); ok || c != (capability.Capability{}) {
		t.Errorf("empty bus: %v, %v", c, ok)
	}
	// A host on the other topic does not answer this one.
	Answer(b, capability.CapabilitiesProbeTopic)
	if _, ok := Probe(b, capability.DiagnosticProbeTopic, ""); ok {
		t.Error("the capabilities host answered the diagnostic probe")
	}
	if _, ok := Probe(nil, capability.DiagnosticProbeTopic, ""); ok {
		t.Error("nil bus is hosted")
	}
	if ok := Report(nil, diag.Info, "m", ""); ok {
		t.Error("Report on a nil bus is hosted")
	}
	Answer(nil, capability.DiagnosticProbeTopic)() // nil bus: nothing, no panic
}

func TestProbeAgainstAnswer(t *testing.T) {
	b := newBus(t)
	off := Answer(b, capability.DiagnosticProbeTopic)
	for min, want := range map[string]bool{
		"": true, "1.1.0": true, "v1.1.0": true, "1.0.0": true, "0.0.1": true,
		"1.1.0-rc.1": true, "1.1.0+build.7": true, "v1.1.0-0": true,
		"1.1.1": false, "1.2.0": false, "2.0.0": false, "v2.0.0-alpha": false,
	} {
		c, ok := Probe(b, capability.DiagnosticProbeTopic, min)
		if ok != want {
			t.Errorf("min %q: hosted = %v, want %v", min, ok, want)
		}
		if ok && c != capability.Current() {
			t.Errorf("min %q: got %v, want %v", min, c, capability.Current())
		}
	}
	off()
	if _, ok := Probe(b, capability.DiagnosticProbeTopic, ""); ok {
		t.Error("hosted after the host's off")
	}
}

func TestInvalidMinimumFailsClosedWithoutEmitting(t *testing.T) {
	b := newBus(t)
	Answer(b, capability.DiagnosticProbeTopic)
	probes := 0
	b.On(capability.DiagnosticProbeTopic, func(any) { probes++ })
	for _, min := range []string{"1", "1.1", "v1.1", "x", "v", "V1.1.0", "=1.1.0", " 1.1.0", "1.1.0 ", "01.1.0", "1.1.0-", "1.1.0+", "vv1.1.0"} {
		if _, ok := Probe(b, capability.DiagnosticProbeTopic, min); ok {
			t.Errorf("min %q: hosted", min)
		}
		if err := capability.CheckVersion(min); err == nil {
			t.Errorf("CheckVersion(%q) accepted it", min)
		} else if !strings.Contains(err.Error(), "MAJOR.MINOR.PATCH") {
			t.Errorf("CheckVersion(%q) = %v, does not say what is expected", min, err)
		}
	}
	if probes != 0 {
		t.Errorf("an invalid minimum emitted %d probes", probes)
	}
}

func TestReplyShapes(t *testing.T) {
	type other struct{ Version string }
	nan := math.NaN()
	m := func(version, protocol any) map[string]any {
		return map[string]any{"version": version, "protocol": protocol}
	}
	ok := []any{
		capability.Capability{Version: "1.1.0", Protocol: 1},
		capability.Capability{Version: "v1.1.0", Protocol: 1},
		capability.Capability{Version: "1.2.3-rc.1+exp.sha.5114f85", Protocol: 1},
		capability.Capability{Version: "10.0.0", Protocol: 1},
		&capability.Capability{Version: "1.1.0", Protocol: 1},
		m("1.1.0", float64(1)),
		m("v3.0.0", 1),
		m("1.1.0", int64(1)),
		m("1.1.0", uint8(1)),
		m("1.1.0", float32(1)),
		m("1.1.0", json.Number("1")),
		m("1.1.0", json.Number("1.0")),
		m("1.1.0", json.Number("1e0")),
		map[string]any{"version": "1.1.0", "protocol": 1.0, "extra": []int{1}},
	}
	bad := []any{
		nil,
		capability.Capability{},
		capability.Capability{Version: "1.1.0", Protocol: 0},
		capability.Capability{Version: "1.1.0", Protocol: 2},
		capability.Capability{Version: "1.1.0", Protocol: -1},
		capability.Capability{Version: "", Protocol: 1},
		capability.Capability{Version: "1.1", Protocol: 1},
		capability.Capability{Version: "1", Protocol: 1},
		capability.Capability{Version: "V1.1.0", Protocol: 1},
		capability.Capability{Version: "vv1.1.0", Protocol: 1},
		capability.Capability{Version: "01.1.0", Protocol: 1},
		capability.Capability{Version: "1.01.0", Protocol: 1},
		capability.Capability{Version: "1.1.0-01", Protocol: 1},
		capability.Capability{Version: "1.1.0 ", Protocol: 1},
		capability.Capability{Version: "1.1.0-rc.1", Protocol: 1}, // below the 1.1.0 minimum
		capability.Capability{Version: "1.0.9", Protocol: 1},
		capability.Capability{Version: "0.9.0", Protocol: 1},
		(*capability.Capability)(nil),
		&capability.Capability{Version: "1.1.0", Protocol: 2},
		m("1.1.0", float64(1.5)),
		m("1.1.0", float64(1)+1e-15),
		m("1.1.0", nan),
		m("1.1.0", math.Inf(1)),
		m("1.1.0", "1"),
		m("1.1.0", true),
		m("1.1.0", nil),
		m("1.1.0", json.Number("0x1p0")),
		m("1.1.0", json.Number("01")),
		m("1.1.0", json.Number("")),
		m("1.1.0", json.Number("2")),
		m("1.1.0", int8(-1)),
		m(1.1, float64(1)),
		m(nil, float64(1)),
		m([]byte("1.1.0"), float64(1)),
		map[string]any{"version": "1.1.0"},
		map[string]any{"protocol": float64(1)},
		map[string]any{},
		map[string]any(nil),
		map[string]string{"version": "1.1.0", "protocol": "1"},
		map[string]int{"protocol": 1},
		"1.1.0",
		1,
		float64(1),
		other{"1.1.0"},
		&other{"1.1.0"},
		capability.ProbeRequest{},
		json.RawMessage(`{"version":"1.1.0","protocol":1}`),
		[]any{"1.1.0", 1},
		func() {},
		struct{}{},
	}
	for _, reply := range ok {
		if c, hosted := capability.Compatible(reply, capability.DiagnosticSince); !hosted {
			t.Errorf("Compatible(%#v) = false", reply)
		} else if c.Protocol != capability.Protocol {
			t.Errorf("Compatible(%#v) = %v", reply, c)
		}
		b := newBus(t)
		replier(b, capability.DiagnosticProbeTopic, reply)
		if _, hosted := Probe(b, capability.DiagnosticProbeTopic, capability.DiagnosticSince); !hosted {
			t.Errorf("Probe with reply %#v: not hosted", reply)
		}
	}
	for _, reply := range bad {
		if c, hosted := capability.Compatible(reply, capability.DiagnosticSince); hosted || c != (capability.Capability{}) {
			t.Errorf("Compatible(%#v) = %v, %v", reply, c, hosted)
		}
	}
	// None of the bad replies together is enough, and one good one among
	// them is.
	b := newBus(t)
	replier(b, capability.DiagnosticProbeTopic, bad...)
	if _, hosted := Probe(b, capability.DiagnosticProbeTopic, capability.DiagnosticSince); hosted {
		t.Error("hosted with only bad replies")
	}
	good := &capability.Capability{Version: "v1.4.0", Protocol: 1}
	replier(b, capability.DiagnosticProbeTopic, append(append([]any{}, bad[:9]...), good)...)
	replier(b, capability.DiagnosticProbeTopic, bad...)
	if c, hosted := Probe(b, capability.DiagnosticProbeTopic, capability.DiagnosticSince); !hosted || c != *good {
		t.Errorf("one good reply among bad: %v, %v", c, hosted)
	}
}

func TestFirstCompatibleReplyWins(t *testing.T) {
	b := newBus(t)
	replier(b, capability.DiagnosticProbeTopic, capability.Capability{Version: "0.1.0", Protocol: 1}, capability.Capability{Version: "v1.2.0", Protocol: 1}, capability.Capability{Version: "9.0.0", Protocol: 1})
	Answer(b, capability.DiagnosticProbeTopic)
	if c, ok := Probe(b, capability.DiagnosticProbeTopic, "1.0.0"); !ok || c != (capability.Capability{Version: "v1.2.0", Protocol: 1}) {
		t.Errorf("got %v, %v; want the first compatible reply, version as sent", c, ok)
	}
}

func TestLateAndConcurrentRepliesAreSafe(t *testing.T) {
	b := newBus(t)
	var kept []func(any)
	var mu sync.Mutex
	b.On(capability.DiagnosticProbeTopic, func(p any) {
		mu.Lock()
		kept = append(kept, p.(capability.ProbeRequest).Respond)
		mu.Unlock()
	})
	// A first probe that nobody answers in time.
	if _, ok := Probe(b, capability.DiagnosticProbeTopic, ""); ok {
		t.Fatal("hosted without a reply")
	}
	// Replies during a second probe, from other goroutines, while the
	// first probe's respond is also called late from more goroutines.
	release := make(chan struct{})
	var wg sync.WaitGroup
	b.On(capability.DiagnosticProbeTopic, func(p any) {
		respond := p.(capability.ProbeRequest).Respond
		mu.Lock()
		first := kept[0]
		mu.Unlock()
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					respond(capability.Capability{Version: "1.1.0", Protocol: 1})
				} else {
					respond(nil)
				}
				first(capability.Capability{Version: "1.1.0", Protocol: 1})
			}()
		}
		wg.Wait() // all replied before Emit returns
	})
	within(t, 5*time.Second, func() {
		if c, ok := Probe(b, capability.DiagnosticProbeTopic, "1.0.0"); !ok || c != (capability.Capability{Version: "1.1.0", Protocol: 1}) {
			t.Errorf("concurrent replies during the probe: %v, %v", c, ok)
		}
	})
	// Every kept respond, called after its Probe returned, concurrently.
	mu.Lock()
	late := append([]func(any){}, kept...)
	mu.Unlock()
	for range 4 {
		for _, respond := range late {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				respond(capability.Capability{Version: "1.1.0", Protocol: 1})
				respond(map[string]any{"version": "2.0.0", "protocol": 1.0})
			}()
		}
	}
	close(release)
	wg.Wait()
}

func TestLateReplyDoesNotChangeAResult(t *testing.T) {
	b := newBus(t)
	var respond func(any)
	b.On(capability.DiagnosticProbeTopic, func(p any) { respond = p.(capability.ProbeRequest).Respond })
	c, ok := Probe(b, capability.DiagnosticProbeTopic, "")
	respond(capability.Capability{Version: "1.1.0", Protocol: 1})
	if ok || c != (capability.Capability{}) {
		t.Fatalf("got %v, %v", c, ok)
	}
	// The late call must not leak into a later probe either.
	b.Close()
	if _, ok := Probe(b, capability.DiagnosticProbeTopic, ""); ok {
		t.Fatal("a late reply answered a later probe")
	}
}

func TestAnswerTakesAnyPayload(t *testing.T) {
	b := newBus(t)
	Answer(b, capability.DiagnosticProbeTopic)
	var got []any
	rec := func(r any) { got = append(got, r) }
	for _, p := range []any{
		nil, "probe", 1, capability.ProbeRequest{}, (*capability.ProbeRequest)(nil), &capability.ProbeRequest{},
		map[string]any{"respond": rec}, rec, struct{ Respond func(any) }{rec},
	} {
		b.Emit(capability.DiagnosticProbeTopic, p) // the panic hook fails the test
	}
	if len(got) != 0 {
		t.Fatalf("answered %d probes of the wrong shape", len(got))
	}
	b.Emit(capability.DiagnosticProbeTopic, capability.ProbeRequest{Respond: rec})
	b.Emit(capability.DiagnosticProbeTopic, &capability.ProbeRequest{Respond: rec})
	if len(got) != 2 || got[0] != any(capability.Current()) || got[1] != any(capability.Current()) {
		t.Fatalf("answers %#v, want two %#v", got, capability.Current())
	}
}

// Probe, Report and the bus may all be used from inside a respond callback
// or a handler; nothing deadlocks and every call completes.
func TestReentrancyThroughRespond(t *testing.T) {
	b := newBus(t)
	offHost := Answer(b, capability.DiagnosticProbeTopic)
	var log []string
	b.On(diag.Topic, func(p any) {
		r := p.(diag.Report)
		log = append(log, "report "+r.Message)
		if r.Message == "outer" {
			// A listener that reports in turn, i.e. probes again.
			Report(b, diag.Info, "inner", "listener")
		}
	})
	within(t, 5*time.Second, func() {
		b.Emit(capability.DiagnosticProbeTopic, capability.ProbeRequest{Respond: func(reply any) {
			log = append(log, "reply "+reply.(capability.Capability).Version)
			b.Emit("other", nil)
			off := b.On("other", func(any) { log = append(log, "other") })
			b.Emit("other", nil)
			off()
			if _, ok := Probe(b, capability.DiagnosticProbeTopic, ""); ok {
				log = append(log, "nested probe hosted")
			}
			Report(b, diag.Warning, "outer", "respond")
			offHost() // the host goes away from inside its own answer
		}})
	})
	want := []string{"reply " + capability.Version, "other", "nested probe hosted", "report outer", "report inner"}
	if strings.Join(log, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", log, want)
	}
	if Report(b, diag.Info, "after", "") {
		t.Error("hosted after the host turned itself off")
	}
}

func TestReport(t *testing.T) {
	b := newBus(t)
	var got []any
	b.On(diag.Topic, func(p any) { got = append(got, p) })

	if Report(b, diag.Error, "m", "s") {
		t.Error("no host, but Report says hosted")
	}
	off := replier(b, capability.DiagnosticProbeTopic, capability.Capability{Version: "1.0.9", Protocol: 1}) // too old
	if Report(b, diag.Error, "m", "s") {
		t.Error("hosted by a host older than DiagnosticSince")
	}
	off()
	replier(b, capability.DiagnosticProbeTopic, map[string]any{"version": "1.1.0", "protocol": 1.0})
	if !Report(b, diag.Error, "disk full", "backup") {
		t.Error("not hosted by a compatible host")
	}
	want := diag.Report{Level: diag.Error, Message: "disk full", Source: "backup"}
	if len(got) != 1 || got[0] != any(want) {
		t.Fatalf("emitted %#v, want exactly %#v", got, want)
	}
}

// The answer is boxed once; a receiver cannot alter it for others.
func TestSharedAnswerIsImmutable(t *testing.T) {
	b := newBus(t)
	Answer(b, capability.DiagnosticProbeTopic)
	var first any
	b.Emit(capability.DiagnosticProbeTopic, capability.ProbeRequest{Respond: func(r any) { first = r }})
	c := first.(capability.Capability)
	c.Version = "9.9.9"
	if got, _ := Probe(b, capability.DiagnosticProbeTopic, ""); got != capability.Current() {
		t.Fatalf("a receiver changed the shared answer: %v", got)
	}
}

// Probe emits exactly one request per call, a ProbeRequest value.
func TestProbeEmitsOneRequestValue(t *testing.T) {
	b := newBus(t)
	var n atomic.Int32
	b.On(capability.CapabilitiesProbeTopic, func(p any) {
		if _, ok := p.(capability.ProbeRequest); !ok {
			t.Errorf("probe payload is %T, want ProbeRequest", p)
		}
		n.Add(1)
	})
	Probe(b, capability.CapabilitiesProbeTopic, "")
	Probe(b, capability.CapabilitiesProbeTopic, "1.0.0")
	if n.Load() != 2 {
		t.Fatalf("%d requests for 2 probes", n.Load())
	}
}
