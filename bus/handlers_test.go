package bus

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A handler's panic, a nil handler and the panic hook: the emitter goes on.

func TestNilHandler(t *testing.T) {
	b := New()
	quiet(t, b)
	off := b.On("t", nil)
	b.Emit("t", 1)
	off()
	off()
	b.On("u", func(any) {})
	if b.registry.HasCallback("t") {
		t.Fatal("a nil handler was subscribed")
	}
}

func TestPanicIsRecoveredAndReported(t *testing.T) {
	b := New()
	type panicReport struct {
		topic string
		v     any
	}
	var reports []panicReport
	b.SetPanicHook(func(topic string, v any) { reports = append(reports, panicReport{topic, v}) })
	var got []int
	b.On("t", func(any) { got = append(got, 1); panic("boom") })
	b.On("t", func(any) { got = append(got, 2) })
	b.On("t", func(p any) { got = append(got, 3); _ = p.(string) }) // runtime panic
	b.On("t", func(any) { got = append(got, 4); panic(nil) })
	b.On("t", func(any) { got = append(got, 5) })

	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("the emitter saw a panic: %v", r)
			}
		}()
		b.Emit("t", 7)
	}()
	if want := []int{1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("handlers run: %v, want %v", got, want)
	}
	if len(reports) != 3 {
		t.Fatalf("got %d panic reports, want 3: %v", len(reports), reports)
	}
	if reports[0] != (panicReport{"t", "boom"}) {
		t.Errorf("first report = %v", reports[0])
	}
	if _, ok := reports[1].v.(runtime.Error); !ok || reports[1].topic != "t" {
		t.Errorf("second report = %v, want a runtime.Error on t", reports[1])
	}
	var pn *runtime.PanicNilError
	if err, _ := reports[2].v.(error); !errors.As(err, &pn) {
		t.Errorf("third report = %#v, want *runtime.PanicNilError", reports[2].v)
	}
}

func TestPanickingHookIsContained(t *testing.T) {
	b := New()
	b.SetPanicHook(func(string, any) { panic("hook") })
	ran := false
	b.On("t", func(any) { panic("handler") })
	b.On("t", func(any) { ran = true })
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("the emitter saw a panic: %v", r)
			}
		}()
		b.Emit("t", nil)
	}()
	if !ran {
		t.Fatal("the handler after the panic did not run")
	}
}

func TestDefaultPanicHookLogs(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(prev)

	b := New()
	b.SetPanicHook(func(string, any) { t.Error("replaced hook called") })
	b.SetPanicHook(nil) // back to the default
	b.On("the-topic", func(any) { panicker() })
	b.Emit("the-topic", nil)
	out := buf.String()
	for _, want := range []string{"level=ERROR", "the-topic", "the-value", "panicker"} {
		if !strings.Contains(out, want) {
			t.Errorf("default hook log lacks %q:\n%s", want, out)
		}
	}
}

//go:noinline
func panicker() { panic("the-value") }

// Emits, subscriptions and Close from many goroutines at once (run with -race).

func TestConcurrentUse(t *testing.T) {
	b := New()
	quiet(t, b)
	const workers, rounds = 8, 300
	var stable atomic.Int64
	b.On("t0", func(any) { stable.Add(1) })

	var wg sync.WaitGroup
	var emitted atomic.Int64
	within(t, 30*time.Second, func() {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range rounds {
					topic := fmt.Sprintf("t%d", i%3)
					var self atomic.Pointer[func()]
					off := b.On(topic, func(p any) {
						if f := self.Load(); f != nil && i%7 == 0 {
							(*f)() // off from inside a handler, racing others
							b.Emit("t2", p)
						}
					})
					self.Store(&off)
					b.Emit("t0", w)
					emitted.Add(1)
					b.Emit(topic, i)
					if topic == "t0" {
						emitted.Add(1)
					}
					if i%2 == 0 {
						off()
					}
					off()
				}
			}()
		}
		wg.Wait()
	})
	// The stable handler was subscribed before every Emit on t0 and never
	// removed: it saw each of them exactly once.
	if stable.Load() != emitted.Load() {
		t.Fatalf("stable handler saw %d of %d emits", stable.Load(), emitted.Load())
	}
	for _, topic := range []string{"t1", "t2"} {
		if b.registry.HasCallback(topic) {
			t.Errorf("registry keeps entries on %s after every off", topic)
		}
	}
	b.Close()
}

func TestConcurrentClose(t *testing.T) {
	for range 20 {
		b := New()
		quiet(t, b)
		var wg sync.WaitGroup
		within(t, 10*time.Second, func() {
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range 100 {
						off := b.On("t", func(any) {})
						b.Emit("t", j)
						if i == 0 && j == 50 {
							b.Close()
						}
						off()
					}
				}()
			}
			wg.Wait()
		})
		calls := 0
		b.On("t", func(any) { calls++ })
		b.Emit("t", nil)
		if calls != 0 {
			t.Fatal("handler called after Close")
		}
	}
}
