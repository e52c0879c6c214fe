// Package service is diagrelay's JSON-RPC 2.0 server: hosts in any
// language drive a relay.Manager through it, and child processes report to
// it. The wire contract (methods, params, results, notifications, errors,
// limits) is docs/protocol.md in the repository; the types behind it are
// package internal/wire's, shared with the module's clients, and wire.go
// maps the library's types onto them.
//
// # Frames
//
// One JSON object per line, at most 64 KiB. Frames are strict: UTF-8 only,
// member names matched exactly, a name repeated in any object refused,
// nesting at most MaxDepth, an id a string of at most MaxIDBytes, an
// integer or null, no batches. They are checked with jsontext from
// github.com/go-json-experiment/json: an exact RFC 8259 tokenizer whose
// token walk lets the server stop at MaxDepth and place a repeated name
// (envelope or params) in one pass. Every reply is valid UTF-8 JSON, and
// after any error the connection stays usable.
//
// # Peers
//
// The peer given to ServeHost (stdio) is the host. Socket peers start
// pending and send session.hello {token}: the host token makes the
// connection a host; a child token from runtime.open binds it to that
// runtime generation, and attribution comes from that binding alone.
// Reopening or closing the runtime revokes the token and closes every
// connection holding it after its request in flight.
//
// # Nested children
//
// A child connection may call runtime.open, runtime.close and
// thread.status for paths strictly below its own thread, and mailbox.read
// and mailbox.ack for its own thread only (nested.go holds the rule; every
// other host method is refused with CodeForbidden naming it). Its children
// are ordinary threads reporting to it. They end with the generation that
// opened them: closing or reopening a child closes, recursively, what that
// generation opened and is still live, because their tokens were given to
// that generation alone and a process tree ends the same way; what the
// host opened below a child is left alone.
//
// # No child can silence another
//
//   - A pending peer lives at most Config.HelloTimeout from accept,
//     whatever it sends; at most Config.MaxPending are pending, and a new
//     one closes the oldest.
//   - Replies waiting for a socket peer are bounded (Config.MaxUnsent); a
//     peer over the bound is disconnected. Notifications never wait: a
//     host that does not read loses them (Stats.NotificationsDropped).
//   - A child token holds at most Config.MaxConnsPerChild connections.
//   - Connections are served round-robin: each holds one of
//     Config.Workers slots for one frame, then queues again, so a child
//     with one frame waits behind at most one frame of each busy peer. A
//     child whose reports the gate drops is paced (PaceDroppedRate after
//     PaceDroppedBurst), which bounds what a flood costs everyone else.
//   - Errors sent to peers name the field or rule, never a host path, a Go
//     type or an internal error; those go to Config.Logger, which
//     NewLimitHandler keeps to a few lines per second.
//
// # Events
//
// A host may call thread.list and events.subscribe to watch the session
// (diagrelay watch does). Each subscriber has its own queue of EventQueue
// events; a subscriber that does not read loses events, counted in a "lost"
// event, and its events take at most half of Config.MaxUnsent, so it never
// slows a child, the host's replies or another subscriber.
//
// # Durability
//
// A reply to diagnostic.report is written only after the report's parent
// message is committed to the mailbox (for mailbox.Store: fsync'd, with
// concurrent posts sharing commits). The wait for the commit holds no
// scheduler slot, so group commit batches every child's posts.
//
// # Locks
//
// A connection's loop holds one of the scheduler's slots (a semaphore)
// while it handles a frame, and takes it before any lock; a report gives
// it back while the relay and the mailbox work. Under a slot the lock
// order is:
//
//  1. Server.openMu (runtime.open and runtime.close), then any of: the
//     relay's locks (relay's package doc gives their order), the token
//     table's mu, or the event hub's mu and then one subscriber's mu.
//  2. Every other lock is a leaf, held for a few field updates and
//     never while taking another: Server.mu (connections, pending peers,
//     requests in flight), a conn's mu (its hello timer) and qmu (its
//     write queue), and the log limiter's.
//
// No lock is held while a frame is written or while the relay calls a
// sink (the mailbox, hostNotifier, the event hub as relay.Observer), and
// none but openMu while a relay.Manager or Runtime method runs. A
// connection's states, and which goroutine enters each, are listed at
// connState in conn.go.
//
// # Shutdown
//
// Shutdown stops accepting connections and requests, interrupts blocked
// socket reads, waits for requests in flight (their replies are sent and
// their mailbox writes committed), and closes the relay.Manager. The caller
// then closes the mailbox.
package service
