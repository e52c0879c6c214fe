package bus

import (
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	EventBus "github.com/asaskevich/EventBus"
)

// A Bus delivers events synchronously to the handlers subscribed to their
// topic. The zero value is an empty, open Bus, like New's. A Bus is safe for
// concurrent use by multiple goroutines and must not be copied after first
// use.
type Bus struct {
	// mu serializes registry changes (On, off, Close). It is never held
	// while user code runs.
	mu sync.Mutex
	// registry is the upstream EventBus holding the subscriptions; nil
	// before the first On and once closed. Guarded by mu; only internal
	// collector entries are in it.
	registry EventBus.Bus

	// routes is the immutable topic → subscriptions snapshot that Emit
	// reads without locking. Replaced (never mutated) under mu; nil before
	// the first On and once closed.
	routes atomic.Pointer[map[string][]*subscription]
	closed atomic.Bool
	hook   atomic.Pointer[func(topic string, recovered any)]
}

type subscription struct {
	fn      func(payload any)
	removed atomic.Bool
	// entry is what is subscribed to the EventBus registry: it appends this
	// subscription to a collector and does nothing else.
	entry func(*collector)
}

// collector is the only payload ever published on the EventBus registry.
type collector struct{ subs []*subscription }

// New returns an empty, open Bus with the default panic hook.
func New() *Bus { return new(Bus) }

// Emit delivers payload to the handlers subscribed to topic, synchronously and
// in subscription order, and returns when all of them have returned or
// panicked. A topic without handlers, or a closed Bus, makes Emit a no-op.
// See the package documentation for what handlers added or removed during
// Emit see. Emit takes no lock and does not allocate.
func (b *Bus) Emit(topic string, payload any) {
	routes := b.routes.Load()
	if routes == nil {
		return
	}
	for _, s := range (*routes)[topic] {
		if b.closed.Load() {
			return
		}
		if s.removed.Load() {
			continue
		}
		b.call(topic, s.fn, payload)
	}
}

// call runs one handler, turning a panic into a report to the hook.
func (b *Bus) call(topic string, fn func(any), payload any) {
	returned := false
	defer func() {
		if !returned {
			// recover is nil only for runtime.Goexit (or panic(nil) under
			// GODEBUG=panicnil=1); the hook hears of it either way.
			b.report(topic, recover())
		}
	}()
	fn(payload)
	returned = true
}

func (b *Bus) report(topic string, recovered any) {
	defer func() { _ = recover() }() // a panicking hook must not reach the emitter
	if h := b.hook.Load(); h != nil {
		(*h)(topic, recovered)
		return
	}
	slog.Default().Error("bus: handler panicked",
		"topic", topic, "panic", recovered, "stack", string(debug.Stack()))
}

// SetPanicHook sets the function told about each handler panic: the topic
// being emitted and the recovered value. It runs on the emitting goroutine,
// after the panic is recovered and before the next handler runs, with no lock
// held. recovered is nil only if the handler called runtime.Goexit, which
// then goes on to end the emitting goroutine. nil restores the default, which
// logs through slog.Default at error level with the stack.
func (b *Bus) SetPanicHook(hook func(topic string, recovered any)) {
	if hook == nil {
		b.hook.Store(nil)
		return
	}
	b.hook.Store(&hook)
}

// On subscribes fn to topic and returns the function that unsubscribes it.
// Any string is a topic. fn receives each payload exactly as emitted,
// including nil. A nil fn, or a closed Bus, subscribes nothing and returns
// an off that does nothing. off is idempotent and safe to call from any
// goroutine, including from a handler during Emit.
func (b *Bus) On(topic string, fn func(payload any)) (off func()) {
	if fn == nil {
		return nop
	}
	s := &subscription{fn: fn}
	s.entry = func(c *collector) { c.subs = append(c.subs, s) }

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nop
	}
	if b.registry == nil {
		b.registry = EventBus.New()
	}
	// Subscribe fails only for a non-function; entry is one.
	_ = b.registry.Subscribe(topic, s.entry)
	b.refresh(topic)
	return func() { b.off(topic, s) }
}

func (b *Bus) off(topic string, s *subscription) {
	if !s.removed.CompareAndSwap(false, true) {
		return // already off; the flag alone keeps Emit from calling it
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.registry == nil {
		return // closed
	}
	// EventBus identifies a handler by its code pointer, which entries
	// share, so Unsubscribe(e) removes the first entry with e's code pointer,
	// not necessarily e. One Unsubscribe per entry still empties the topic;
	// then the survivors are subscribed again in their order.
	subs := b.collect(topic)
	for _, e := range subs {
		_ = b.registry.Unsubscribe(topic, e.entry)
	}
	for _, other := range subs {
		if !other.removed.Load() {
			_ = b.registry.Subscribe(topic, other.entry)
		}
	}
	b.refresh(topic)
}

// collect asks the registry for topic's subscriptions, in order. b.mu held.
func (b *Bus) collect(topic string) []*subscription {
	var c collector
	b.registry.Publish(topic, &c)
	return c.subs
}

// refresh publishes a new routes snapshot with topic's current
// subscriptions. b.mu held.
func (b *Bus) refresh(topic string) {
	subs := b.collect(topic)
	var old map[string][]*subscription
	if r := b.routes.Load(); r != nil {
		old = *r
	}
	routes := make(map[string][]*subscription, len(old)+1)
	for t, s := range old {
		routes[t] = s
	}
	if len(subs) > 0 {
		routes[topic] = subs
	} else {
		delete(routes, topic)
	}
	b.routes.Store(&routes)
}

// Close stops the Bus: later Emits do nothing, later Ons subscribe nothing,
// and the handlers are released. An Emit in progress skips the handlers it
// has not called yet. Close does not wait for running handlers and may be
// called from one. Calling Close again does nothing.
func (b *Bus) Close() {
	b.closed.Store(true)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.registry = nil
	b.routes.Store(nil)
}

func nop() {}
