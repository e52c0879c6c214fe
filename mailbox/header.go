package mailbox

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
)

// bbolt's meta page, as bbolt 1.x lays it out in the machine's byte order
// at the start of each of the file's first two pages, after a 16-byte page
// header: magic, version, page size, flags (4 bytes each), the root
// bucket's page and sequence, the freelist's page, the high-water page
// (pgid: the file's pages are [0, pgid)), the transaction id, and an
// FNV-64a checksum of the bytes before it.
const (
	boltMagic       = 0xED0CDAED
	boltMetaOffset  = 16
	boltMetaSize    = 64
	boltNoFreelist  = ^uint64(0)
	boltDefaultPage = 4096
)

type boltMeta struct {
	pageSize             uint32
	root, freelist, pgid uint64
	txid                 uint64
}

// checkHeader reads the meta pages of the bbolt file f (of size bytes)
// before bbolt does, and refuses a file whose newest valid meta points at
// pages the file does not hold. bbolt reads the freelist at such a page
// while it opens the file and panics; it has then mapped the file and
// locked it, and the mapping keeps the lock until the process exits, so
// the refusal must come first. A file with no valid meta is left to bbolt,
// which refuses it without a panic.
func checkHeader(f io.ReaderAt, size int64) error {
	first, ok := readMeta(f, 0)
	pageSize := int64(boltDefaultPage)
	if ok {
		pageSize = int64(first.pageSize)
	}
	second, ok2 := readMeta(f, pageSize)
	switch {
	case ok && ok2 && second.txid > first.txid, !ok && ok2:
		first = second
	case !ok && !ok2:
		return nil
	}
	if size < 0 || first.pgid > uint64(size)/uint64(first.pageSize) {
		return fmt.Errorf("%w: the file is truncated: its pages need %d pages of %d bytes, it holds %d bytes", ErrCorrupt, first.pgid, first.pageSize, size)
	}
	if first.root >= first.pgid || (first.freelist != boltNoFreelist && first.freelist >= first.pgid) {
		return fmt.Errorf("%w: bbolt's meta page points past the file's %d pages", ErrCorrupt, first.pgid)
	}
	return nil
}

// readMeta reads and verifies the meta at offset.
func readMeta(f io.ReaderAt, offset int64) (boltMeta, bool) {
	var b [boltMetaOffset + boltMetaSize]byte
	if _, err := f.ReadAt(b[:], offset); err != nil {
		return boltMeta{}, false
	}
	m := b[boltMetaOffset:]
	e := binary.NativeEndian
	h := fnv.New64a()
	h.Write(m[:56])
	if e.Uint32(m[0:]) != boltMagic || e.Uint64(m[56:]) != h.Sum64() {
		return boltMeta{}, false
	}
	meta := boltMeta{
		pageSize: e.Uint32(m[8:]),
		root:     e.Uint64(m[16:]),
		freelist: e.Uint64(m[32:]),
		pgid:     e.Uint64(m[40:]),
		txid:     e.Uint64(m[48:]),
	}
	if meta.pageSize < 512 || meta.pageSize > 1<<16 || meta.pageSize&(meta.pageSize-1) != 0 {
		return boltMeta{}, false
	}
	return meta, true
}
