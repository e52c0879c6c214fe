package mailbox

import (
	"errors"
	"fmt"

	"github.com/diagrelay/diagrelay/diag"
)

// Entry is a stored message with the id the mailbox gave it. Its form on
// the wire belongs to package service (docs/protocol.md, mailbox.read).
type Entry struct {
	ID uint64
	diag.ParentMessage
}

// Limits shared by every mailbox implementation, so that a message accepted
// by one is accepted by all.
const (
	// MaxReadLimit caps Read's limit; a larger limit is lowered to it. It
	// is also the most ids one ReadPage lists as damaged, and the service's
	// bound on mailbox.read's limit: one home for the number.
	MaxReadLimit = 1000
	// DefaultReadLimit is the number of entries Read returns when its limit
	// is zero or negative.
	DefaultReadLimit = MaxReadLimit
	// MaxRecipientBytes bounds a recipient thread path. A valid thread path
	// (at most 32 segments of 1 + 64 bytes) is at most 2080 bytes.
	MaxRecipientBytes = 4096
	// MaxMessageBytes bounds the total length of a message's string fields
	// (recipient, from, text, level, source, message). Relay's messages are a
	// few KiB at most; the bound keeps one bad caller from bloating the store.
	MaxMessageBytes = 64 << 10
)

var (
	// ErrClosed is returned by every method of a closed Store.
	ErrClosed = errors.New("mailbox: closed")
	// ErrCorrupt is wrapped by Open's error when the file cannot be
	// trusted (empty, not a bbolt file, failing bbolt's consistency check,
	// not a mailbox), and by errors caused by damage found later. A record
	// that fails its checksum does not cause it: ReadPage quarantines it.
	ErrCorrupt = errors.New("mailbox: store is corrupt")
	// ErrLocked is wrapped by Open's error when another Store, in this or
	// another process, holds the file.
	ErrLocked = errors.New("mailbox: store file is locked by another process or Store")
	// ErrLogFull is wrapped by the error of a Post, PostOnce or Ack that
	// found the Store's log at its bound while the log could not be
	// checkpointed into the file (the disk full, an I/O error): nothing of
	// it was stored. Writes go on once a checkpoint succeeds again
	// (docs/mailbox.md, "Checkpoints").
	ErrLogFull = errors.New("mailbox: the log is full and cannot be checkpointed into the file")
)

// validate reports why m cannot be stored, or nil. Both implementations call
// it so they accept exactly the same messages; the record decoder calls it
// so that what it accepts could have been stored.
func validate(m *diag.ParentMessage) error {
	if m.Recipient == "" {
		return errors.New("message has no recipient")
	}
	if len(m.Recipient) > MaxRecipientBytes {
		return fmt.Errorf("recipient of %d bytes exceeds the limit of %d", len(m.Recipient), MaxRecipientBytes)
	}
	if n := messageBytes(m); n > MaxMessageBytes {
		return fmt.Errorf("message of %d bytes exceeds the limit of %d", n, MaxMessageBytes)
	}
	// Entries are served as JSON, and time.Time refuses to marshal years
	// outside [0, 9999]; refuse them here rather than on every Read.
	if y := m.At.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("message time %d is outside years 0 to 9999", y)
	}
	return nil
}

func messageBytes(m *diag.ParentMessage) int {
	return len(m.Recipient) + len(m.From) + len(m.Text) + len(m.Level) + len(m.Source) + len(m.Message)
}

// readLimit turns Read's limit argument into the number of entries to return.
func readLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultReadLimit
	case limit > MaxReadLimit:
		return MaxReadLimit
	}
	return limit
}
