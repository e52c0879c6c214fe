package service

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
)

// This file serves the host-only methods that let a person watch the
// session (docs/protocol.md): thread.list, and events.subscribe with the
// event notifications that follow it.

// EventQueue is how many events may wait for one subscriber. Past it,
// events are lost and counted; the count goes out as a "lost" event as
// soon as the subscriber reads again. Events have their own queue: a
// subscriber that does not read never holds up a child, the host's
// replies, or another subscriber.
const EventQueue = 1024

func (c *conn) threadList(raw []byte) (any, *wire.Error) {
	var p wire.Empty
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	return c.s.peers.list(wireThreads(c.s.mgr.Threads())), nil
}

// eventsSubscribe starts the connection's event stream. Subscribing again
// changes nothing. The first events may reach the host just before the {}
// reply: they share the connection, and the reply is queued after the
// subscription starts so that no event in between is missed.
func (c *conn) eventsSubscribe(raw []byte) (any, *wire.Error) {
	var p wire.Empty
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	c.s.events.subscribe(c)
	return wire.Empty{}, nil
}

// eventHub fans relay observations and runtime changes out to the
// subscribers. It is the relay.Observer of the server's Manager.
type eventHub struct {
	now func() time.Time

	mu   sync.Mutex
	subs map[*conn]*subscriber
	// live is len(subs), read without mu: with no subscriber (the usual
	// case) a report builds no event and takes no lock shared by every
	// child.
	live atomic.Int32
}

func newEventHub(now func() time.Time) *eventHub {
	if now == nil {
		now = time.Now
	}
	return &eventHub{now: now, subs: make(map[*conn]*subscriber)}
}

func (h *eventHub) subscribe(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[c] != nil {
		return
	}
	s := &subscriber{c: c, wake: make(chan struct{}, 1)}
	h.subs[c] = s
	h.live.Store(int32(len(h.subs)))
	go s.run(h)
}

func (h *eventHub) remove(c *conn) {
	h.mu.Lock()
	delete(h.subs, c)
	h.live.Store(int32(len(h.subs)))
	h.mu.Unlock()
}

// publish queues ev for every subscriber without waiting for any. The
// hub's lock is held while queueing, so every subscriber sees the same
// order.
func (h *eventHub) publish(ev wire.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		s.push(ev, h.now)
	}
}

// Observe turns what the relay did into an event.
func (h *eventHub) Observe(o relay.Observation) {
	if h.live.Load() == 0 {
		return
	}
	ev := wire.Event{Thread: o.Thread, At: o.At}
	switch o.Kind {
	case relay.ObservedDelivery:
		ev.Kind, ev.Level = wire.EventDelivered, string(o.Report.Level)
		ev.Source, ev.Message = wire.Ptr(o.Report.Source), wire.Ptr(o.Report.Message)
		if len(o.Redacted) > 0 {
			ev.Redacted = o.Redacted
		}
		ev.Edge = o.Edge
	case relay.ObservedDrop:
		ev.Kind, ev.Reason = wire.EventDropped, wireReason(o.Verdict)
	case relay.ObservedHeld, relay.ObservedNotification:
		ev.Kind = wire.EventHeld
		if o.Kind == relay.ObservedNotification {
			ev.Kind = wire.EventNotified
		}
		ev.Thread = o.Notification.Thread
		ev.Message, ev.NotifyType = wire.Ptr(o.Notification.Text), string(o.Notification.Level)
	default:
		return
	}
	h.publish(ev)
}

// opened publishes opened or reopened for the runtime just started.
func (h *eventHub) opened(m *relay.Manager, rt *relay.Runtime) {
	if h.live.Load() == 0 {
		return
	}
	t, ok := m.Thread(rt.Path())
	if !ok {
		return
	}
	kind := wire.EventOpened
	if rt.Generation() > 1 {
		kind = wire.EventReopened
	}
	h.publish(wire.Event{Kind: kind, Thread: t.Path, At: h.now(), Parent: wire.Ptr(t.Parent),
		Owner: wire.Ptr(t.Owner), Generation: rt.Generation()})
}

func (h *eventHub) closed(rt *relay.Runtime) {
	h.publish(wire.Event{Kind: wire.EventClosed, Thread: rt.Path(), At: h.now(), Generation: rt.Generation()})
}

// exited publishes the exit of a bound token's process.
func (h *eventHub) exited(path string, gen uint64, at time.Time, peer *wire.Peer) {
	h.publish(wire.Event{Kind: wire.EventExited, Thread: path, At: at, Generation: gen, Peer: peer})
}

// subscriber is one host connection's event queue: a ring of at most
// EventQueue events, written to the connection by its own goroutine.
type subscriber struct {
	c    *conn
	wake chan struct{} // capacity 1: "the queue changed"

	mu   sync.Mutex
	ring [EventQueue]wire.Event
	head int
	n    int
	lost uint64 // events dropped since the last "lost" event was queued
}

// push queues ev, or counts it lost when the queue is full. A count of
// lost events goes in first, where they were lost, when there is room for
// both.
func (s *subscriber) push(ev wire.Event, now func() time.Time) {
	s.mu.Lock()
	if s.lost > 0 && s.n+2 <= EventQueue {
		s.putLocked(wire.Event{Kind: wire.EventLost, At: now(), Count: s.lost})
		s.lost = 0
	}
	if s.lost > 0 || s.n == EventQueue {
		s.lost++
	} else {
		s.putLocked(ev)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) putLocked(ev wire.Event) {
	s.ring[(s.head+s.n)%EventQueue] = ev
	s.n++
}

// pop takes the oldest event; with none left, a count of lost events.
func (s *subscriber) pop(now func() time.Time) (wire.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		if s.lost == 0 {
			return wire.Event{}, false
		}
		ev := wire.Event{Kind: wire.EventLost, At: now(), Count: s.lost}
		s.lost = 0
		return ev, true
	}
	ev := s.ring[s.head]
	s.ring[s.head] = wire.Event{} // let its strings go
	s.head = (s.head + 1) % EventQueue
	s.n--
	return ev, true
}

// awaitRoom waits until events take less than half of the bytes the
// connection may have unsent (Config.MaxUnsent), or reports false once the
// connection ends: the other half stays free for replies and ui.notify,
// which must not wait behind a backlog of events. The writer gives no
// signal of its own for this, so while the host is behind this looks again
// every millisecond; a host that keeps up never waits here.
func (s *subscriber) awaitRoom(b []byte) bool {
	for !s.c.pushWithin(b, s.c.s.cfg.MaxUnsent/2, true, true) {
		select {
		case <-time.After(time.Millisecond):
		case <-s.c.stop.done():
			return false
		case <-s.c.gone.done():
			return false
		case <-s.c.s.closing:
			return false
		}
	}
	return true
}

// run writes queued events to the connection until it ends. A host that
// does not read stalls only this goroutine, while push goes on counting
// losses.
func (s *subscriber) run(h *eventHub) {
	defer h.remove(s.c)
	for {
		select {
		case <-s.wake:
		case <-s.c.stop.done():
			return
		case <-s.c.gone.done():
			return
		}
		for {
			ev, ok := s.pop(h.now)
			if !ok {
				break
			}
			b, err := json.Marshal(wire.Notification{JSONRPC: wire.Version, Method: wire.NotifyEvent, Params: ev})
			if err != nil {
				continue // strings and numbers only: cannot happen
			}
			if !s.awaitRoom(append(b, '\n')) {
				return
			}
		}
	}
}
