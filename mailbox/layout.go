package mailbox

import (
	"encoding/binary"
)

// The file layout, third edition (format tag diagrelay-mailbox/3), in
// bbolt buckets; docs/mailbox.md tells its history and why:
//
//	meta  key "format" = formatTag; the bucket's sequence is the last id given
//	log   every unacknowledged entry of every recipient, one bucket,
//	      key   = id as 8 bytes big-endian, then the recipient's bytes
//	      value = record (record.go)
//
// Ids grow with every Post, so a commit's new entries are the highest keys
// of log: they append to its last leaf pages (filled to the brim, see
// logFillPercent) and a commit of 64 recipients' reports dirties the same
// few pages as a commit of one recipient's. Which entries are whose is
// held in memory (index.go), built from the keys at Open; a key names its
// recipient so that the index needs nothing but keys, and so that a
// damaged record is still listed to the recipient it was filed under.
//
// Files of the first two editions keep one nested bucket per recipient
// under recipients (key = id, value = record). Open migrates them in
// place (migrate.go); entries there that are not records (only damage
// makes them) stay where they are, and Check counts them.
var (
	metaBucket       = []byte("meta")
	logBucket        = []byte("log")
	recipientsBucket = []byte("recipients") // first and second editions
	formatKey        = []byte("format")
	formatTag        = []byte("diagrelay-mailbox/3")
	// formatTagOpen is the tag while a Store has the file open: every
	// checkpoint but Close's writes it, Close's writes formatTag. The
	// layout is the same; the tag differs so that a diagrelay that does not
	// read the log (DIR/mailbox.log.*) refuses a file whose log may hold
	// what the file does not yet ("unsupported mailbox format"), after a
	// crash, rather than lose it without a word (docs/mailbox.md,
	// "Going back").
	formatTagOpen = []byte("diagrelay-mailbox/3+log")
	// formatTagV2 is the tag of second-edition files: records with
	// checksums, one bucket per recipient. formatTagV1 is the tag of
	// first-edition files, whose records have no checksum. Open migrates
	// both to formatTag; an older diagrelay then refuses the file
	// ("unsupported mailbox format") instead of misreading it.
	formatTagV2 = []byte("diagrelay-mailbox/2")
	formatTagV1 = []byte("diagrelay-mailbox/1")
)

// logFillPercent is how full bbolt fills log's pages before it splits
// one. Keys only ever append to log (ids grow), so a split page is never
// written to again: bbolt's default (half) would leave every page half
// empty and write twice the pages per commit.
const logFillPercent = 1.0

// logKey is the key of recipient's entry id in log.
func logKey(id uint64, recipient string) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(recipient)), id), recipient...)
}

// parseLogKey splits a log key; ok is false for a key that names no id
// and recipient (only damage makes one).
func parseLogKey(k []byte) (id uint64, recipient []byte, ok bool) {
	if len(k) < 9 {
		return 0, nil, false
	}
	return binary.BigEndian.Uint64(k), k[8:], true
}
