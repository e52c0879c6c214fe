// Package bus is a small synchronous, in-process event bus: one per child
// session, so that nothing emitted on one child's bus reaches another's.
//
// A Bus carries a single payload of any type per event. Handlers subscribed
// with On run synchronously on the emitting goroutine, in subscription order,
// before Emit returns. Every payload value, including nil, reaches handlers
// unchanged; the bus never inspects it.
//
// # Reentrancy
//
// No lock is held while a handler runs. A handler may therefore call Emit, On,
// an off function or Close on the same bus (directly, or from a callback it
// received, such as a capability probe's respond), from any depth, without
// deadlock. An Emit inside a handler is delivered completely before the outer
// Emit continues; a handler that unconditionally re-emits its own topic
// recurses like any recursive function.
//
// # Snapshot semantics
//
// Emit delivers to the handlers subscribed to its topic when Emit begins:
//
//   - A handler added during an Emit (by a handler or by another goroutine)
//     does not receive that event; it receives the events emitted after its
//     On returned.
//   - A handler removed during an Emit is skipped if Emit has not called it
//     yet and the removal happened before Emit reached it. On the emitting
//     goroutine (an earlier handler calling off) this is exact. From another
//     goroutine, off does not wait: a call already running, or just about to
//     start, still completes.
//   - Close during an Emit skips the handlers that Emit has not called yet,
//     with the same caveat for other goroutines.
//
// # off
//
// On returns an off function that removes exactly that subscription; the same
// function subscribed twice is called twice and needs both offs. off may be
// called from any goroutine, from within a handler, and after Close. Calling
// it again does nothing.
//
// # Panics
//
// A panicking handler is recovered. The panic is reported to the hook set
// with SetPanicHook, the remaining handlers still run, and the emitter never
// sees it. The default hook logs the topic, the panic value and the stack at
// error level through slog.Default. A hook may call runtime/debug.Stack: it
// runs before the panicking handler's frames are unwound. A panicking hook is
// itself recovered and ignored.
//
// # Close
//
// After Close, Emit does nothing, On subscribes nothing and returns an off
// that does nothing, and the handlers are released. Close does not wait for
// an Emit running on another goroutine (a handler may call Close, so waiting
// could deadlock). Close is idempotent.
//
// # How github.com/asaskevich/EventBus is used, and why it cannot deadlock
//
// Each Bus owns one EventBus, which is the registry of subscriptions: topic
// to subscriptions, in subscription order. Upstream EventBus holds its mutex
// while it calls handlers (its issue #52; the fix, PR #53, was never merged),
// calls them by reflection (a nil argument or a signature mismatch panics),
// and finds the handler to unsubscribe by its code pointer, which all
// closures from one function literal share. So user handlers and payloads
// never enter EventBus. The only function ever subscribed to it is an
// internal collector entry, func(*collector), one closure per subscription.
// Publishing a non-nil *collector on a topic makes EventBus call each entry
// in order, and each entry only appends its subscription to the collector:
// no user code, nothing that blocks, nothing that panics. On and off change
// the registry and then collect the topic this way into an immutable
// snapshot; Emit reads the newest snapshot with one atomic load and calls
// the user handlers with no lock held. Registry changes are serialized by
// the Bus's own mutex, which is never held while user code runs either.
// Because entries share a code pointer, EventBus's Unsubscribe(e) removes
// the first entry with e's code pointer, not necessarily e; off therefore
// unsubscribes once per entry, which empties the topic, and subscribes the
// survivors again in order.
//
// Emit thus never touches EventBus, takes no lock and allocates nothing: a
// subscription change costs time proportional to the topic's subscriptions,
// which is fine for the few long-lived handlers a child session installs.
package bus
