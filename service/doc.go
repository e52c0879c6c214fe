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
// # Bound tokens
//
// At accept the server reads the peer's credentials from the kernel
// (SO_PEERCRED on Linux, LOCAL_PEERCRED and LOCAL_PEERPID on macOS;
// internal/peercred) and closes a peer whose uid is neither
// its own nor 0 before reading from it. Root is let in because it can
// read any process's memory anyway; its hellos are checked like anyone's.
// A token opened with bind (or under Config.BindPeer) belongs to the
// first process that says hello with it and that process's descendants,
// found by walking the parent chain at each hello (bind.go). Decisions:
//
//   - Linux 6.5+: the owner is held by a pidfd (SO_PEERPIDFD), waited on
//     in the runtime's poller, so its exit is seen at once without a
//     thread or a polling loop. The pidfd also makes pid reuse harmless:
//     it names the process, not the number, and the owner's and the
//     connecting process's pidfds are checked alive after the walk, so a
//     match means both lived throughout it and neither pid was reused.
//     The pidfd is asked for at the hello that needs it, not at accept:
//     the kernel's answer is the same (the peer as of its connect), and a
//     pending or unbound peer then costs no file descriptor.
//   - Kernels before 6.5 and macOS have no pidfd: a process is its pid and
//     start time (clock ticks on Linux, microseconds on macOS), and the
//     owner's exit is its token's last connection closing. A pid reused
//     within one tick of the owner's start passes for it; that takes the
//     kernel going through every pid in that tick.
//   - Other systems give no credentials: every peer is let in (its token
//     alone decides), runtime.open with bind is refused (CanBindPeers is false) and serve
//     --bind-peer does not start.
//   - After the exit the thread shows exited (Config.Now's time, so tests
//     control it), an exited event goes out, the token's connections are
//     closed and the token is refused to every process; the runtime stays
//     open until the host closes it, so its status and mailbox stay
//     readable. Exit does not cascade to nested children: they are
//     processes of their own, bound or not.
//   - A hello with the host token from a live owner or a descendant is
//     refused: host.token is readable by all the user's processes. A
//     descendant that outlives its owner is re-parented and no longer
//     found; serve --host-socket=off (no host token at all) is the answer
//     where no child may ever reach the host.
//
// # Spawn tokens
//
// spawn.token gives the host a token for threads below a path, bound to
// the host's process (the stdio host's is serve's parent); spawn.open
// lets that process or a descendant (the same walk) open a thread there
// that is not open now, its token bound to the opening process from the
// start (spawn.go). So a child that a program other than the host starts,
// with the token only in its inherited environment, reports to the host
// while no other process can use the token. Decisions:
//
//   - Each spawned thread is a top-level child (its own share), as if the
//     host had opened it; the threads one path's spawn tokens opened count
//     together toward Config.MaxNested.
//   - When the opening process exits its thread is closed (the runtime
//     only: status and mailbox stay), unlike a bound token's thread: no
//     one else holds its token, and the count must not fill with the dead
//     children of a long session.
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
//   - A top-level child holds at most Config.MaxNested live threads below
//     it, and its nested tokens, at every depth, draw on its share and
//     pace: nesting multiplies neither (nested.go).
//   - Connections are served round-robin: each holds one of
//     Config.Workers slots for one frame, then queues again, so a child
//     with one frame waits behind at most one frame of each busy peer. The
//     host takes no slot: it never queues behind children. A child whose
//     reports the gate drops or finds invalid (any kind: wrong type,
//     missing field, params not an object) is paced (PaceDroppedRate after
//     PaceDroppedBurst).
//   - Fairness is by cost, not by frame (cost.go). The measure is bytes of
//     work: each byte read, each read call (CostPerRead), each frame
//     (CostPerFrame), each byte of a reply, each byte of report text
//     sanitized. Bytes, because every stage that costs the server time
//     (the tokenizer, the params decoder, the sanitizer, the encoder, the
//     socket) is linear in them once decoding is bounded, and because
//     they are counted exactly and the same on any machine and any load,
//     where measured CPU time would charge a child for the noise of its
//     neighbours; the fixed per-frame and per-read terms price the
//     dispatch and the system call that bytes alone would make free (tiny
//     frames, frames written a few bytes at a time). A child token's
//     connections share one bucket (Config.CostRate, Config.CostBurst), a
//     pending peer has an eighth of one, a host none; an overdrawn
//     connection is not read, before hello or after, until its bucket
//     refills, and waits off the scheduler. Admitted reports are charged
//     too: the gate admits 5 in 10 s, far inside any share.
//   - Decoding is bounded before the expensive part: at most
//     MaxObjectMembers in an object and MaxFrameMembers in a frame, counted
//     while the tokenizer walks the frame and refused at the first member
//     over, so no params decoder or name set ever sees thousands of
//     members: a 64 KiB frame costs its bytes, a few ordinary frames'
//     worth of work, not the quadratic bookkeeping of 7,000 names.
//   - One budget holds every byte waiting to be written to all socket
//     peers (Config.MaxUnsentTotal, budget.go), replies and events, beside
//     each peer's own bound. Past it, the peers whose writers have gone
//     longest without progress (the oldest non-readers) are disconnected
//     first; the stdio host is not counted (one peer, its own bound, and
//     it cannot be disconnected). The queue is one contiguous buffer written
//     straight to the socket, without a bufio.Writer copy (a spare of at
//     most keepQueueCap is kept, a larger one dropped once written), because
//     a queue of one allocation per reply costs its size classes and slice
//     headers: a 60-byte probe reply takes a 64- or 128-byte class, so live
//     heap would be 1.69x the bytes counted, and Go's GC (GOGC=100) doubles
//     that in RSS. The contiguous queue is 1.20x live (its growth), about
//     2.4x in RSS (TestUnsentRepliesCostTheirBytes, 16 peers at about 0.6
//     MiB each), and the total budget bounds the whole.
//   - A connection counts toward MaxPending and MaxConnsPerChild until its
//     descriptor is closed, whatever its peer did (a half-closed peer with
//     replies unread holds its slot during the 5 s the server gives it).
//     A peer that closed its end entirely (POLLHUP) is dropped at its
//     next read, or within 100 ms if it is being paced, with whatever it
//     left in the socket unread: no work for a peer that left. One already
//     gone when accepted is closed by the accept loop at once; when MaxPending
//     are waiting, a new peer closes the oldest pending one whose peer has
//     left (among the 8 oldest), else the oldest. The listen backlog is
//     Go's, the kernel's somaxconn; under a connect churn that still fills
//     it, a Unix connect fails with EAGAIN at once and a child dials again
//     (the harness and tests do).
//   - Frames are strict about what is not a request too: no reply to a
//     notification (no id, but "jsonrpc":"2.0" and a method), whatever is
//     wrong with it; only RFC 8259 whitespace around the object; host
//     methods and the probes refuse unknown params members, while
//     diagnostic.report and session.hello ignore them (docs/protocol.md, "Frames").
//   - Errors sent to peers name the field or rule, never a host path, a Go
//     type or an internal error; those go to Config.Logger, which
//     serve's NewLimitHandler keeps to a few lines per second.
//
// # Memory returns
//
// After a flood the Go runtime keeps the heap it grew: the garbage the
// flood left is not collected until the next collection, which an idle
// server does not reach (its heap goal was set at the flood's peak; the
// forced one comes after 2 minutes), and the background scavenger keeps
// about that goal resident. Measured on serve (testdata/flood): 10 s
// after the flooders left, RSS was 2.5-4x its figure at start-up, and in
// the combining style about 25 MB of the heap was uncollected garbage or
// free spans not returned, beside 12 MB live. So the server gives it
// back itself (memreturn.go). A flood has left when the connection
// count fell by at least memFloodConns and to at most half its peak, or
// the unsent total drained after passing memFloodUnsent, or, for a
// connect churn whose connections never raise the count, after
// memChurnAccepts accepts; a second later (the last connections'
// goroutines have ended), if at most memQuietAccepts connections arrived
// meanwhile (else it looks again a second later: a flood that reconnects
// is returned for once it has stopped), the server calls
// Config.ReturnMemory through Config.AfterFunc (the injected clock).
// The default runs two collections (the first moves sync.Pool buffers
// to their victim caches, the second frees them) and debug.FreeOSMemory:
// on serve after a flood about 32 ms of CPU (GODEBUG=gctrace=1). At most
// one call per memReturnEvery (5 s), so whatever peers do it costs at
// most about 0.6 % of a core; ordinary traffic calls it at most once per
// memChurnAccepts connections. Per-connection buffers are already small
// (jsonframe's read buffer, keepQueueCap) and die with their connection, so returning
// the free heap was what was missing. What stays is live state: threads,
// gates, kept reports, the redaction rules (8 MiB of compiled
// expressions, built once, at the first report) and the
// heap's fragmentation around them. File-backed pages (the binary, the
// mailbox's bbolt mmap: about 9-10 MiB of serve's RSS, the same idle and
// after a flood) are the kernel's to keep or drop.
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
// # Cluster
//
// With Config.Directory (package cluster, docs/cluster.md) the server is a
// cluster's home, which publishes every token it issues and revokes, or,
// with Config.Edge, an edge, which issues none (runtime.open is refused)
// and claims at a child's first hello a token the home issued, opening a
// local runtime for its thread (directory.go). A claim waits on the
// cluster with no scheduler slot held; RevokeToken is the edge's
// runtime.close, called when the home closed the token.
//
// # Locks
//
// A child's or pending peer's loop holds one of the scheduler's slots (a
// semaphore) while it handles a frame, and takes it before any lock; a
// report gives it back while the relay and the mailbox work; a host takes
// none. The lock order is:
//
//  1. Server.openMu (runtime.open and runtime.close), then any of: the
//     relay's locks (relay's package doc gives their order), the token
//     table's mu, or the event hub's mu and then one subscriber's mu.
//  2. A conn's qmu (its write queue), then the unsent budget's mu
//     (budget.go, a leaf): a frame is counted in the total as it is
//     queued. The peers the budget disconnects are killed after both are
//     released.
//  3. Every other lock is a leaf, held for a few field updates and
//     never while taking another: Server.mu (connections, pending peers,
//     requests in flight), a conn's mu (its hello timer), a cost bucket's
//     (cost.go), the memory return's (memreturn.go), and the log
//     limiter's.
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
