package bus

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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
