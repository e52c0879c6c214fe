// Package cluster carries diagnostics from children on other machines to
// the parent over NATS JetStream (docs/cluster.md), without a
// transport of its own.
//
// A Home is the parent's serve (serve --cluster): the service.Directory of
// its server, it writes each token runtime.open issues to the bucket
// diagrelay-threads (key "t." and the token's SHA-256, never the token),
// sets it closed at reopen and close, and consumes the stream DIAGRELAY,
// delivering each report an edge admitted through relay.Manager's
// DeliverRemote: stored once per id with the mailbox's PostOnce, in one
// transaction, then acknowledged to JetStream.
//
// An Edge is a serve with children only (serve --join): the Directory of
// its server, it claims a token at its first hello with a compare-and-set
// on the bucket (on the entry its watch brought, when it did: one write, no
// read), and it is its relay.Manager's mailbox: each report the
// edge's gate admits is published with a unique Nats-Msg-Id, and Post
// returns, so the child's reply is written, only after JetStream's
// acknowledgement. It watches the bucket and revokes a claimed token the
// home closed, and publishes its threads' drop and redaction totals.
//
// Both refuse a JetStream that may acknowledge a write before it is on disk
// (varz.go), unless Config.AllowLazyFsync.
//
// # Goroutines and locks
//
// A Home runs three goroutines from Start to Close: the bucket's watch (its
// index of entries), the revoker (sets queued tokens closed), and the
// consumer (at most 64 deliveries at once, each on its own goroutine, and
// the pruning of old ids and the purge of acknowledged reports). An Edge
// runs two: the watch and the counts ticker. Each has one mutex, a leaf:
// nothing is called with it held, and Directory.Revoked, which the server
// calls under its token table's lock, only queues. Network calls carry a 5 s deadline (DefaultPublishWait).
package cluster
