// Package service is diagrelay's JSON-RPC 2.0 server (SPEC §8): hosts in
// any language drive a relay.Manager through it, and child processes report
// to it.
//
// # Framing
//
// One JSON object per line ("\n", or "\r\n") in both directions. A frame
// over 64 KiB is answered -32600 and the rest of its line is skipped; the
// connection stays usable. Batches (arrays) are not supported. A request
// without "id" is a notification and gets no reply, not even an error.
//
// # Peers
//
// The peer given to ServeHost (stdio in `diagrelay serve --stdio`) is the
// host. Socket peers start unauthenticated and send session.hello {token}:
// the host token (DIR/host.token) makes the connection a host; a child token
// from runtime.open binds it to that runtime generation, and attribution
// comes from that binding alone. Reopening or closing the runtime revokes
// the token: later calls answer -32003. Tokens are 32 random bytes from
// crypto/rand, looked up by SHA-256 and compared in constant time.
//
// # Methods
//
// Host: runtime.open {path, parent?, owner?} → {path, token, generation};
// runtime.close {path} → {}; thread.status {path} → relay.Status;
// mailbox.read {recipient, limit?} → {messages: [mailbox.Entry]} (limit
// 1–1000, default 1000, oldest first, unacknowledged only); mailbox.ack
// {recipient, ids} → {acked}; capabilities.probe → {version, protocol}.
//
// Child: diagnostic.probe → {version, protocol}; diagnostic.report {level,
// message, source?} → {}. Policy drops (duplicate, rate, cap) answer {}
// like a delivery, so a child learns nothing from them; an invalid report is
// counted in the thread's status and answered -32602 with the reason.
//
// Server to host: ui.notify {thread, message, notifyType} notifications,
// none in print mode. A notification never waits for a slow host: when a
// host has not read the 1024 frames queued before it, it is dropped (and
// recorded as a sink error); the parent message and status entry remain.
//
// # Durability
//
// A reply to diagnostic.report is written only after the report's parent
// message is committed to the mailbox (for mailbox.Store: fsync'd, with
// concurrent posts sharing commits). So after a crash every acknowledged
// report is in the mailbox exactly once. If the mailbox fails the reply is
// -32005 and the report is in the thread's status only.
//
// # Errors
//
// -32700 malformed JSON; -32600 not a request, or frame over 64 KiB; -32601
// unknown method; -32602 bad params, naming the field; -32001 no hello yet
// or unknown token; -32002 a child calling a host method or the reverse;
// -32003 revoked token; -32004 unknown thread; -32005 mailbox failure;
// -32006 shutting down. Every error leaves the connection usable, and no
// client's input affects another's.
//
// # Shutdown
//
// Shutdown stops accepting connections and requests, interrupts blocked
// socket reads, waits for requests in flight (their replies are sent and
// their mailbox writes committed), and closes the relay.Manager. The caller
// then closes the mailbox.
package service
