// Package mailbox stores the parent messages of diagrelay: each delivered child diagnostic becomes a non-waking message in the
// mailbox of the recipient thread (the reporting thread's parent, or its
// owner), where the host reads it with Read and acknowledges it with Ack.
//
// Two implementations satisfy relay.Mailbox and behave the same:
// Memory, held in memory for tests and embedding, and Store, a durable
// go.etcd.io/bbolt file (the service's DIR/mailbox.db).
//
// The contract:
//
//   - Post stores a message under a new id and returns only once it is
//     stored: in memory for Memory; for Store, written to its log and
//     flushed (fdatasync), so a message whose Post returned survives a
//     crash (kill -9, power loss on a disk that honors its flushes). An error means nothing was
//     stored. A message with no recipient, over MaxRecipientBytes or
//     MaxMessageBytes, or with a time outside years 0 to 9999 (which JSON
//     cannot carry) is refused by both implementations alike.
//   - Ids are unique and increasing within a mailbox, across recipients
//     and, for Store, across reopening: an id is never reused, not even
//     after its entry was acknowledged.
//   - Read returns a recipient's unacknowledged entries oldest first (in id
//     order, which is the order the Posts were stored in), at most the
//     limit asked (DefaultReadLimit when the limit is <= 0, never more than
//     MaxReadLimit). Reading does not consume: delivery to the reader is
//     at least once, and an entry stays readable until acknowledged, also
//     across a crash or restart of the reader or the Store. ReadPage also
//     names the damaged records it passed over (Store only): a record that
//     fails its checksum or cannot be decoded is never served as a
//     message, never hides the others, and is removed by Ack like any id.
//   - Ack removes the given entries of that recipient and returns how many
//     it removed. Ids that are unknown, already acknowledged, repeated or
//     another recipient's are ignored and not counted, so a reader can
//     repeat an Ack safely and cannot remove other threads' messages. An
//     acknowledged entry is deleted (Store logs the deletion and flushes
//     it before Ack returns, and the next checkpoint removes the entry
//     from the file), so the file holds only what is still to be read.
//   - Message times are kept at nanosecond precision and returned in UTC,
//     without a monotonic clock reading. Nothing in the package reads the
//     clock.
//   - Nothing bounds the number of unacknowledged entries: the relay's
//     per-runtime limits bound how fast they arrive.
//
// Thread status is not stored here: it is memory-only and
// belongs to the relay.
//
// Store commits a write by appending it to a log of its own beside the
// bbolt file (DIR/mailbox.log.0 and .1) with one fdatasync, and writes the
// log into the bbolt file in checkpoints (in the background past 2 MiB of
// log, while commits go on in the other file; at Open and at Close); what
// the log holds meanwhile is kept in memory too, for Read. So a
// commit costs one flush, where a bbolt commit costs two. The log is
// bounded (two epochs of 4 MiB): if checkpoints keep failing, writes fail
// with ErrLogFull once it is full, and go on after one succeeds. While a
// Store has the file open it is tagged diagrelay-mailbox/3+log, so that a
// diagrelay without the log refuses it after a crash. docs/mailbox.md,
// "One flush a commit", tells the log, its checkpoints and what a crash
// or a power loss can leave.
//
// Store commits concurrent writes together (group commit): a Post that
// arrives while a commit is being written joins the next commit, which
// starts as soon as the previous one ends (before that one's posters are
// answered), with no timer: a leader that finds fewer than 4 writes
// queued yields the processor once, so that posters already running join
// it. A lone poster pays one flush per Post; many posters share flushes.
// Stats reports commits per post. Close waits for the writes in flight, then
// closes the file; a second process (or Store) opening the same file
// meanwhile fails with ErrLocked after the lock timeout instead of hanging.
//
// The Store keeps its word on a damaged file too. Open starts a new mailbox
// only where no file exists; an existing file that is empty, not a bbolt
// file, fails bbolt's consistency check or is not a mailbox is refused
// (ErrCorrupt) and left as it is. Every record written carries a CRC-32C
// over its id and content (records of the first format, without one, still
// read; Check counts them as unchecked), every frame of the log a CRC-32C
// of its own, and a Post returns nil only once its frame reads back from
// the flushed log as written. Check reports
// on a file without changing it. Damage gives an error, never a panic.
//
// The file is of the third edition (format tag diagrelay-mailbox/3): every
// recipient's entries in one bucket keyed by id then recipient, so that a
// group commit appends to the same few pages however many recipients its
// posts have; which entries are whose is held in memory (8 bytes per
// unacknowledged entry), built at Open.
// Open migrates files of the first two editions (one bucket per
// recipient) in place, in crash-safe chunks; Check reads every edition.
// docs/mailbox.md tells the layout, the migration and why.
package mailbox
