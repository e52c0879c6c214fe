package bus

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	EventBus "github.com/asaskevich/EventBus"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// within fails the test instead of hanging when f does not return in time:
// a deadlock would otherwise block go test until its global timeout.
var within = testutil.Within

// quiet makes b's panics fail the test unless the test expects them.
func quiet(t *testing.T, b *Bus) {
	b.SetPanicHook(func(topic string, v any) {
		t.Errorf("unexpected panic on %q: %v", topic, v)
	})
}

func TestIsolation(t *testing.T) {
	a, b := New(), New()
	quiet(t, a)
	quiet(t, b)
	var gotA, gotB []any
	a.On("t", func(p any) { gotA = append(gotA, p) })
	b.On("t", func(p any) { gotB = append(gotB, p) })
	a.Emit("t", 1)
	b.Emit("t", 2)
	b.Emit("t", 3)
	if !slices.Equal(gotA, []any{1}) || !slices.Equal(gotB, []any{2, 3}) {
		t.Fatalf("a got %v, b got %v; want [1] and [2 3]", gotA, gotB)
	}
	a.Close()
	b.Emit("t", 4)
	if !slices.Equal(gotB, []any{2, 3, 4}) {
		t.Fatalf("closing a affected b: b got %v", gotB)
	}
}

func TestTopicsAreExact(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []string
	for _, topic := range []string{"", "a", "a:b", "A"} {
		b.On(topic, func(any) { got = append(got, topic) })
	}
	for _, topic := range []string{"a", "", "A", "a:b", "b", "a:"} {
		b.Emit(topic, nil)
	}
	if want := []string{"a", "", "A", "a:b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered to %q, want %q", got, want)
	}
}

func TestSynchronousInSubscriptionOrder(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []int
	for i := range 10 {
		b.On("t", func(any) { got = append(got, i) })
	}
	b.On("other", func(any) { got = append(got, -1) })
	for round := range 3 {
		got = got[:0]
		b.Emit("t", round)
		// Emit has returned: every handler must already have run, in order.
		if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
			t.Fatalf("round %d: got %v, want %v", round, got, want)
		}
	}
}

func TestHandlersRunOnTheEmittingGoroutine(t *testing.T) {
	b := New()
	quiet(t, b)
	var where uint64
	b.On("t", func(any) { where = goid() })
	b.Emit("t", nil)
	if me := goid(); where != me {
		t.Fatalf("handler ran on goroutine %d, emitter is %d", where, me)
	}
}

// goid returns the current goroutine's id, for TestHandlersRunOnTheEmittingGoroutine.
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	var id uint64
	fmt.Sscanf(strings.TrimPrefix(string(buf), "goroutine "), "%d", &id)
	return id
}

func TestAnyPayloadReachesHandlersUnchanged(t *testing.T) {
	type report struct{ Level, Message string }
	var nilPtr *report
	var nilErr error
	var nilMap map[string]any
	payloads := []any{
		nil, nilPtr, nilErr, nilMap, 0, "", "x", 1.5, report{"info", "m"},
		&report{}, []byte(nil), map[string]any{"level": 1}, errors.New("e"),
		func() {}, make(chan int), struct{}{}, [0]int{},
	}
	b := New()
	quiet(t, b)
	var got []any
	b.On("t", func(p any) { got = append(got, p) })
	for _, p := range payloads {
		b.Emit("t", p)
	}
	if len(got) != len(payloads) {
		t.Fatalf("got %d deliveries, want %d", len(got), len(payloads))
	}
	for i := range payloads {
		if reflect.TypeOf(got[i]) != reflect.TypeOf(payloads[i]) {
			t.Errorf("payload %d: got type %T, want %T", i, got[i], payloads[i])
		}
		if v := reflect.ValueOf(payloads[i]); v.IsValid() && v.Comparable() && got[i] != payloads[i] {
			t.Errorf("payload %d: got %#v, want %#v", i, got[i], payloads[i])
		}
	}
	if got[0] != nil {
		t.Errorf("nil payload arrived as %#v", got[0])
	}
}

func TestReentrantCallsDoNotDeadlock(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []string
	var offLate func()
	b.On("inner", func(p any) { got = append(got, fmt.Sprint("inner ", p)) })
	b.On("outer", func(any) {
		got = append(got, "outer")
		b.Emit("inner", 1) // Emit from a handler
		offLate = b.On("late", func(any) { got = append(got, "late") })
		b.Emit("late", nil) // a handler added by a handler receives later Emits
		offLate()
		b.Emit("late", nil) // and stops after its off
	})
	var offSelf func()
	offSelf = b.On("once", func(any) {
		got = append(got, "once")
		offSelf()
		offSelf() // twice, from inside itself
		b.Emit("once", nil)
	})
	within(t, 5*time.Second, func() {
		b.Emit("outer", nil)
		b.Emit("once", nil)
		b.Emit("once", nil)
	})
	want := []string{"outer", "inner 1", "late", "once"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestNestedEmitOfSameTopic(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []int
	depth := 0
	b.On("t", func(any) {
		depth++
		got = append(got, depth)
		if depth < 3 {
			b.Emit("t", nil)
		}
		depth--
	})
	b.On("t", func(any) { got = append(got, -depth) })
	within(t, 5*time.Second, func() { b.Emit("t", nil) })
	// Each nested Emit completes (both handlers) before the outer continues.
	if want := []int{1, 2, 3, -2, -1, 0}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestCloseFromHandler(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []int
	b.On("t", func(any) { got = append(got, 1) })
	b.On("t", func(any) { got = append(got, 2); b.Close() })
	b.On("t", func(any) { got = append(got, 3) })
	within(t, 5*time.Second, func() {
		b.Emit("t", nil)
		b.Emit("t", nil)
	})
	if want := []int{1, 2}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v: Close must skip the rest of the Emit and later Emits", got, want)
	}
}

func TestSnapshotSemantics(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []string
	var offC func()
	b.On("t", func(any) {
		got = append(got, "a")
		b.On("t", func(any) { got = append(got, "added") })
		offC()
	})
	b.On("t", func(any) { got = append(got, "b") })
	offC = b.On("t", func(any) { got = append(got, "c") })
	b.Emit("t", nil)
	// The added handler is not in this Emit's snapshot; c was removed before
	// Emit reached it.
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("first Emit: got %q, want %q", got, want)
	}
	got = got[:0]
	b.Emit("t", nil)
	// Only the handler added by the first Emit; the second adds another.
	if want := []string{"a", "b", "added"}; !slices.Equal(got, want) {
		t.Fatalf("second Emit: got %q, want %q", got, want)
	}
}

func TestOffRemovesExactlyItsSubscription(t *testing.T) {
	b := New()
	quiet(t, b)
	var got []int
	same := func(p any) { got = append(got, p.(int)) }
	off1 := b.On("t", same)
	off2 := b.On("t", same)
	b.On("t", func(any) { got = append(got, -1) })
	off3 := b.On("t", same)

	b.Emit("t", 1)
	off2()
	off2() // a second call must not remove another subscription
	b.Emit("t", 2)
	off1()
	b.Emit("t", 3)
	off3()
	off3()
	b.Emit("t", 4)
	want := []int{1, 1, -1, 1, 2, -1, 2, -1, 3, -1}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestClose(t *testing.T) {
	b := New()
	quiet(t, b)
	calls := 0
	off := b.On("t", func(any) { calls++ })
	b.Close()
	b.Emit("t", nil)
	offAfter := b.On("t", func(any) { calls++ })
	b.Emit("t", nil)
	off()
	offAfter()
	offAfter()
	b.Close()
	b.Emit("t", nil)
	if calls != 0 {
		t.Fatalf("%d handler calls after Close", calls)
	}
	if b.registry != nil || b.routes.Load() != nil {
		t.Fatal("Close did not release the handlers")
	}
}

// The registry really is the EventBus: a subscription is an entry there, and
// off takes exactly its own entry out.
func TestRegistryIsEventBus(t *testing.T) {
	b := New()
	quiet(t, b)
	offs := make([]func(), 5)
	for i := range offs {
		offs[i] = b.On("t", func(any) {})
	}
	entries := func() []*subscription {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.collect("t")
	}
	routes := func() []*subscription { return (*b.routes.Load())["t"] }
	all := entries()
	if len(all) != 5 || !slices.Equal(all, routes()) {
		t.Fatalf("registry has %d entries, snapshot %d", len(all), len(routes()))
	}
	offs[1]()
	offs[3]()
	want := []*subscription{all[0], all[2], all[4]}
	if got := entries(); !slices.Equal(got, want) || !slices.Equal(routes(), want) {
		t.Fatal("off removed the wrong registry entries")
	}
	offs[0]()
	offs[2]()
	offs[4]()
	if b.registry.HasCallback("t") {
		t.Fatal("registry keeps entries after every off")
	}
	if _, ok := (*b.routes.Load())["t"]; ok {
		t.Fatal("snapshot keeps an empty topic")
	}
}

// Upstream behaviour the design works around (see doc.go). If a new
// EventBus version changes it, revisit the package.
func TestUpstreamUnsubscribeMatchesByCodePointer(t *testing.T) {
	eb := EventBus.New()
	var got []int
	first, second := appender(&got, 1), appender(&got, 2)
	eb.Subscribe("t", first)
	eb.Subscribe("t", second)
	eb.Unsubscribe("t", second)
	eb.Publish("t")
	if !slices.Equal(got, []int{2}) {
		t.Fatalf("upstream Unsubscribe(second) left %v; the workaround in off may be unneeded", got)
	}
}

// appender is not inlined, so that its closures share one code pointer, as
// the entries made by On do.
//
//go:noinline
func appender(to *[]int, i int) func() { return func() { *to = append(*to, i) } }

func TestZeroValueIsUsable(t *testing.T) {
	var b Bus
	b.Emit("t", nil) // before any On
	quiet(t, &b)
	got := 0
	off := b.On("t", func(any) { got++ })
	b.Emit("t", nil)
	off()
	b.Emit("t", nil)
	b.Close()
	b.Emit("t", nil)
	if got != 1 {
		t.Fatalf("got %d calls, want 1", got)
	}
}
