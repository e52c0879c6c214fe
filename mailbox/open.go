package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Option configures Open.
type Option func(*options)

type options struct {
	lockTimeout time.Duration
}

// WithLockTimeout sets how long Open waits for the file's lock (default
// DefaultLockTimeout). d <= 0 means try once.
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) { o.lockTimeout = d }
}

// Open opens the mailbox file at path; its directory must exist.
//
// Only a missing file starts a new mailbox: it is laid out under a
// temporary name and linked into place complete, so a crash never leaves
// an empty or half-made mailbox at path. An existing file must earn trust
// first: Open fails with an error wrapping ErrCorrupt, and leaves the file
// as it is, if the file is empty, is not a bbolt file, fails bbolt's
// consistency check or is a bbolt file of something else. Damage inside a
// record is not such a failure: Read quarantines the record (see ReadPage).
//
// Open fails with an error wrapping ErrLocked if another Store holds the
// file past the lock timeout.
func Open(path string, opts ...Option) (*Store, error) {
	o := options{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if err := ensureFile(path); err != nil {
		return nil, err
	}
	db, err := openBolt(path, o.lockTimeout, false)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, idx: newIndex(), pend: newPending(0)}
	if err := s.view(func(tx *bolt.Tx) error { return trust(tx, path) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("mailbox: %s: %w", path, err)
	}
	var l layoutState
	err = s.view(func(tx *bolt.Tx) (err error) { l, err = checkLayout(tx); return err })
	switch {
	case err != nil:
	case l == layoutNone:
		err = s.update(layout)
	case l == layoutOld:
		err = s.migrate()
	}
	if err == nil {
		err = s.view(s.buildIndex)
	}
	if err == nil {
		err = s.replayLog()
	}
	if err != nil {
		for _, l := range s.logs {
			if l != nil {
				l.close()
			}
		}
		db.Close()
		return nil, fmt.Errorf("mailbox: %s: %w", path, err)
	}
	return s, nil
}

// buildIndex reads log's keys into the index.
func (s *Store) buildIndex(tx *bolt.Tx) error {
	c := tx.Bucket(logBucket).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if id, recipient, ok := parseLogKey(k); ok && v != nil {
			s.idx.add(string(recipient), id)
		}
	}
	return nil
}

// ensureFile creates a new mailbox at path if nothing is there, and refuses
// an existing file that cannot be a mailbox before bbolt sees it (bbolt
// would turn an empty file into a new database).
func ensureFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			// bbolt would create the link's target and start a mailbox
			// there: not where anyone looks for one.
			return fmt.Errorf("mailbox: open %s: a symbolic link to a missing file", path)
		}
		if err := create(path); err != nil {
			return fmt.Errorf("mailbox: create %s: %w", path, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("mailbox: open %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("mailbox: open %s: not a regular file (%v)", path, fi.Mode().Type())
	case fi.Size() == 0:
		return fmt.Errorf("mailbox: %s: %w: the file is empty (a new mailbox is started only where no file exists)", path, ErrCorrupt)
	}
	return nil
}

// create lays out a new mailbox in a temporary file beside path, then links
// it to path, which fails rather than replace a file that appeared
// meanwhile (another process's new mailbox is as good as ours).
func create(path string) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Close(); err != nil {
		return err
	}
	db, err := bolt.Open(name, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	if err := db.Update(layout); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	if err := os.Link(name, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a new name in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// openBolt opens the file, turning a panic or fault on a damaged file into
// an error. After such a panic the file is closed, so its lock is let go
// (bbolt's memory map of it stays until the process exits).
func openBolt(path string, lockTimeout time.Duration, readOnly bool) (db *bolt.DB, err error) {
	if lockTimeout <= 0 {
		lockTimeout = time.Nanosecond // bbolt tries once before it checks the timeout
	}
	// The file bbolt opens, so that it can be closed (and its lock let go)
	// when bbolt panics on a damaged file halfway through opening it.
	var file *os.File
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err == nil && fi.Size() > 0 {
			err = checkHeader(f, fi.Size())
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		file = f
		return f, nil
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if file != nil {
					file.Close()
				}
				err = fmt.Errorf("%w: %v", ErrCorrupt, r)
			}
		}()
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		// PreLoadFreelist: a read-only open would otherwise read the
		// freelist later, in the goroutine bbolt's check runs in, where a
		// fault on a damaged freelist could not be recovered.
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout, ReadOnly: readOnly, PreLoadFreelist: true, OpenFile: openFile})
	}()
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%w: %s (waited %v)", ErrLocked, path, lockTimeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, ErrCorrupt):
		return nil, fmt.Errorf("mailbox: %s: %w: not a bbolt file, or its header is damaged: %v", path, ErrCorrupt, err)
	}
	// bbolt's other open errors on a damaged file ("file size too small",
	// a page size it cannot use) come from reading the file, not the OS.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("mailbox: open %s: %w", path, err)
	}
	return nil, fmt.Errorf("mailbox: %s: %w: not a usable bbolt file: %v", path, ErrCorrupt, err)
}

// trust checks that the bbolt file in tx is whole: its pages fit in the
// file, every key and value can be read, and bbolt's consistency check
// passes. It must run under Store.view (or another recover with
// SetPanicOnFault): on a damaged file bbolt panics or faults.
func trust(tx *bolt.Tx, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if need := tx.Size(); need > fi.Size() {
		return fmt.Errorf("%w: the file is truncated: its pages need %d bytes, it holds %d", ErrCorrupt, need, fi.Size())
	}
	// Read every page, key and value here first, where a fault is
	// recovered: bbolt's check runs in a goroutine of its own, where a
	// fault on a damaged page would end the process.
	var sum uint32
	var walk func(b *bolt.Bucket)
	walk = func(b *bolt.Bucket) {
		b.Stats()
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			sum = crc32.Update(crc32.Update(sum, castagnoli(), k), castagnoli(), v)
			if v == nil {
				if child := b.Bucket(k); child != nil {
					walk(child)
				}
			}
		}
	}
	if err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { walk(b); return nil }); err != nil {
		return err
	}
	var errs []error
	for err := range tx.Check() {
		errs = append(errs, err)
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: bbolt's consistency check: %v", ErrCorrupt, errs[0])
	}
	return fmt.Errorf("%w: bbolt's consistency check: %v (and %d more problems)", ErrCorrupt, errs[0], len(errs)-1)
}

// layoutState is what checkLayout found.
type layoutState int

const (
	layoutCurrent layoutState = iota // a third-edition mailbox with nothing to migrate
	layoutNone                       // a bbolt file with no bucket at all
	layoutOld                        // entries under recipients: a first- or second-edition file, or a migration to finish
)

// checkLayout checks that tx holds a diagrelay mailbox of a format this
// code reads. A first- or second-edition file, or one whose migration a crash
// interrupted, is layoutOld (Open migrates it); a bbolt file with no bucket
// at all (the first diagrelay left one when it crashed while creating a
// mailbox) is layoutNone (Open lays it out; it holds nothing to lose).
func checkLayout(tx *bolt.Tx) (layoutState, error) {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		empty := true
		tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if empty {
			return layoutNone, nil
		}
		return 0, fmt.Errorf("%w: a bbolt file but not a diagrelay mailbox (no meta bucket)", ErrCorrupt)
	}
	switch tag := meta.Get(formatKey); {
	case bytes.Equal(tag, formatTagV1), bytes.Equal(tag, formatTagV2):
		if tx.Bucket(recipientsBucket) == nil {
			return 0, fmt.Errorf("%w: no recipients bucket", ErrCorrupt)
		}
		return layoutOld, nil
	case !bytes.Equal(tag, formatTag) && !bytes.Equal(tag, formatTagOpen):
		return 0, fmt.Errorf("unsupported mailbox format %q (this diagrelay reads %q, %q and %q)", tag, formatTagV1, formatTagV2, formatTag)
	}
	if tx.Bucket(logBucket) == nil {
		return 0, fmt.Errorf("%w: no log bucket", ErrCorrupt)
	}
	if boxes := tx.Bucket(recipientsBucket); boxes != nil && holdsRecords(boxes) {
		return layoutOld, nil
	}
	return layoutCurrent, nil
}

// holdsRecords reports whether a recipients bucket (first and second
// editions) still holds an entry that migrate would move.
func holdsRecords(boxes *bolt.Bucket) bool {
	c := boxes.Cursor()
	for name, v := c.First(); name != nil; name, v = c.Next() {
		if box := boxes.Bucket(name); v == nil && box != nil {
			bc := box.Cursor()
			for k, v := bc.First(); k != nil; k, v = bc.Next() {
				if len(k) == 8 && v != nil {
					return true
				}
			}
		}
	}
	return false
}

// layout lays out a new mailbox.
func layout(tx *bolt.Tx) error {
	meta, err := tx.CreateBucket(metaBucket)
	if err != nil {
		return err
	}
	if err := meta.Put(formatKey, formatTag); err != nil {
		return err
	}
	_, err = tx.CreateBucket(logBucket)
	return err
}
