package mailbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Report is what Check found in a mailbox file.
type Report struct {
	Path string
	// Problems are what makes the file untrustworthy as a whole: it is
	// empty, not a bbolt file, fails bbolt's consistency check or is not a
	// mailbox; Open refuses such a file. Damage to single records is
	// counted per recipient instead.
	Problems []string
	// Recipients are the recipients with entries, sorted by name.
	Recipients []RecipientReport
	// Unaddressable counts entries that name no recipient at all (a log
	// key too short to hold an id and a recipient: only damage makes one).
	Unaddressable int
	// Log is what the log beside the file holds (nil if Check did not
	// get as far as reading it).
	Log *LogReport
	// Format is the file's format tag ("diagrelay-mailbox/1", "/2" or
	// "/3"; docs/mailbox.md), "" if it has none.
	Format string
}

// RecipientReport counts one recipient's entries.
type RecipientReport struct {
	Recipient string
	// Unacknowledged counts the messages ReadPage would serve.
	Unacknowledged int
	// Unchecked counts those of the unacknowledged that have no checksum
	// (written before checksums): they decode, but nothing vouches for
	// their content.
	Unchecked int
	// Damaged counts the records that fail their checksum or decoding, or
	// are filed under the wrong recipient; DamagedIDs lists their ids
	// (the first MaxReportedIDs). Unaddressable counts entries whose key
	// is not an id, or that are not records at all.
	Damaged       int
	DamagedIDs    []uint64
	Unaddressable int
}

// MaxReportedIDs bounds RecipientReport.DamagedIDs.
const MaxReportedIDs = 100

// Clean reports whether Check found nothing wrong. Unchecked records do
// not make a report unclean.
func (r *Report) Clean() bool {
	if len(r.Problems) > 0 || r.Unaddressable > 0 {
		return false
	}
	for _, rr := range r.Recipients {
		if rr.Damaged > 0 || rr.Unaddressable > 0 {
			return false
		}
	}
	return true
}

// Check examines the mailbox file at path without changing it: it opens
// the file read-only (waiting for the lock as Open does; a running Store
// holds it, so Check fails with ErrLocked while one runs), runs bbolt's
// consistency check, and verifies every record's checksum. It returns an
// error only when it could not examine the file at all: no file, no
// access, the lock. What it found wrong is in the Report.
func Check(path string, opts ...Option) (*Report, error) {
	o := options{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	r := &Report{Path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("mailbox: check %s: no such file", path)
	case err != nil:
		return nil, fmt.Errorf("mailbox: check %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("mailbox: check %s: not a regular file (%v)", path, fi.Mode().Type())
	case fi.Size() == 0:
		r.Problems = append(r.Problems, "the file is empty")
		return r, nil
	}
	db, err := openBolt(path, o.lockTimeout, true)
	switch {
	case errors.Is(err, ErrCorrupt):
		r.problem(err)
		return r, nil
	case err != nil:
		return nil, err
	}
	s := &Store{db: db, path: path}
	defer db.Close()
	trusted := s.view(func(tx *bolt.Tx) error { return trust(tx, path) })
	if trusted != nil {
		// The records are still counted if they can be reached: that is
		// what there is to save.
		r.problem(trusted)
	}
	if err := s.view(func(tx *bolt.Tx) error { _, err := checkLayout(tx); return err }); err != nil {
		r.problem(err)
		return r, nil
	}
	s.view(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(metaBucket); meta != nil {
			r.Format = string(meta.Get(formatKey))
		}
		return nil
	})
	if err := s.view(r.countRecords); err != nil && trusted == nil {
		r.problem(fmt.Errorf("the records could not all be read: %w", err))
	}
	return r, nil
}

// problem records err without the prefixes that Report.Path and the
// Problems field already say.
func (r *Report) problem(err error) {
	text := strings.TrimPrefix(err.Error(), "mailbox: "+r.Path+": ")
	text = strings.ReplaceAll(text, ErrCorrupt.Error()+": ", "")
	r.Problems = append(r.Problems, text)
}

// countRecords counts the entries of every edition's layout: log (third
// edition) and the per-recipient buckets under recipients (first and
// second editions, and what a migration has not moved yet, or cannot
// move), merged per recipient, with the log beside the file (LogPath)
// applied: its posts counted, the entries its acks remove not.
func (r *Report) countRecords(tx *bolt.Tx) error {
	posts, acked := r.scanLogFor(tx)
	byName := map[string]*RecipientReport{}
	of := func(name []byte) *RecipientReport {
		rr := byName[string(name)]
		if rr == nil {
			rr = &RecipientReport{Recipient: string(name)}
			byName[rr.Recipient] = rr
		}
		return rr
	}
	if log := tx.Bucket(logBucket); log != nil {
		c := log.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			id, name, ok := parseLogKey(k)
			switch {
			case !ok:
				r.Unaddressable++
			case v == nil:
				of(name).Unaddressable++ // a bucket where a record goes
			case acked[logKeyOf{id, string(name)}]:
			default:
				of(name).count(id, v)
			}
		}
	}
	for _, f := range posts {
		if !acked[logKeyOf{f.id, f.recipient}] {
			of([]byte(f.recipient)).count(f.id, f.rec)
		}
	}
	if boxes := tx.Bucket(recipientsBucket); boxes != nil {
		c := boxes.Cursor()
		for name, v := c.First(); name != nil; name, v = c.Next() {
			rr := of(name)
			box := boxes.Bucket(name)
			if v != nil || box == nil {
				rr.Unaddressable++ // a value where a recipient's bucket should be
				continue
			}
			bc := box.Cursor()
			for k, v := bc.First(); k != nil; k, v = bc.Next() {
				if len(k) != 8 || v == nil {
					rr.Unaddressable++
					continue
				}
				rr.count(binary.BigEndian.Uint64(k), v)
			}
		}
	}
	r.Recipients = r.Recipients[:0]
	for _, rr := range byName {
		slices.Sort(rr.DamagedIDs) // the two layouts' ids interleave
		r.Recipients = append(r.Recipients, *rr)
	}
	sort.Slice(r.Recipients, func(i, j int) bool { return r.Recipients[i].Recipient < r.Recipients[j].Recipient })
	return nil
}

// count counts the record v filed under id for rr's recipient.
func (rr *RecipientReport) count(id uint64, v []byte) {
	m, checked, err := decodeRecord(id, v)
	switch {
	case err != nil || m.Recipient != rr.Recipient:
		rr.Damaged++
		if len(rr.DamagedIDs) < MaxReportedIDs {
			rr.DamagedIDs = append(rr.DamagedIDs, id)
		}
	case !checked:
		rr.Unacknowledged++
		rr.Unchecked++
	default:
		rr.Unacknowledged++
	}
}
