// Package filter is diagrelay sanitize's stream: records in, each cleaned
// as a report is cleaned, records out. Records sanitizes; RedactedRecords
// (sanitize --redact) also redacts secrets (package redact).
package filter

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/diagrelay/diagrelay/redact"
	"github.com/diagrelay/diagrelay/sanitize"
)

// Records copies the records of in, each ended by delim, to out through a
// sanitize.Writer cutting each to limit UTF-16 code units (0: no limit),
// each ended by delim; the last gets its delim even if in lacked it. A
// record is never held whole: memory is the two 64 KiB buffers and what
// the Writer holds (bounded by the limit, or by one NFC segment without a
// limit).
func Records(in io.Reader, out io.Writer, limit int, delim byte) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	return records(in, bw, sanitize.NewWriter(bw, limit), delim)
}

// MaxRedactedRecord is the most UTF-16 code units of a record that
// RedactedRecords holds to redact it: a longer record is cut there (with
// "…") whatever the limit, since redacting needs the record whole.
const MaxRedactedRecord = 1 << 20

// RedactedRecords is Records with each record also redacted as a report is
// (redact.Clean: sanitized, secrets redacted, then cut to limit), so that
// no prefix of a secret that straddles the limit survives. It holds each
// record, sanitized and cut to MaxRedactedRecord units: memory is about
// 3 bytes per unit of the longest record, up to 3 MiB, twice.
func RedactedRecords(in io.Reader, out io.Writer, limit int, delim byte) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	rw := &redactingWriter{out: bw, limit: limit}
	rw.sw = sanitize.NewWriter(&rw.held, MaxRedactedRecord)
	return records(in, bw, rw, delim)
}

// redactingWriter sanitizes a record into held, and at Close redacts and
// cuts it and writes it out.
type redactingWriter struct {
	out   *bufio.Writer
	limit int
	held  bytes.Buffer
	sw    *sanitize.Writer
}

func (w *redactingWriter) Write(p []byte) (int, error) { return w.sw.Write(p) }

func (w *redactingWriter) Close() error {
	if err := w.sw.Close(); err != nil {
		return err
	}
	// The sanitized text, redacted, then cut by the sanitizer (redact.Clean
	// on clean text does only the redacting and the cut). Most records
	// hold nothing a rule can match: those are written from the buffer,
	// without a string.
	if held := w.held.Bytes(); (w.limit <= 0 || len(held) <= w.limit) && redact.Clear(held) {
		_, err := w.out.Write(held)
		w.held.Reset()
		return err
	}
	text, counts := redact.Text(w.held.String())
	if counts != nil || w.limit > 0 && len(text) > w.limit {
		text = sanitize.Clean(text, w.limit)
	}
	w.held.Reset()
	_, err := w.out.WriteString(text)
	return err
}

// recordWriter is where records go: a sanitize.Writer, or one that
// redacts. Close ends a record.
type recordWriter interface {
	io.Writer
	Close() error
}

func records(in io.Reader, bw *bufio.Writer, sw recordWriter, delim byte) error {
	br := bufio.NewReaderSize(in, 64<<10)
	pending := false // a record has begun and not ended
	for {
		chunk, err := br.ReadSlice(delim)
		ended := err == nil // chunk ends with delim
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 || ended {
			pending = true
			if _, werr := sw.Write(chunk); werr != nil {
				return werr
			}
		}
		if ended || err == io.EOF && pending {
			pending = false
			if werr := sw.Close(); werr != nil {
				return werr
			}
			if werr := bw.WriteByte(delim); werr != nil {
				return werr
			}
			// Keep an interactive pipe moving: flush when the next read
			// may block.
			if br.Buffered() == 0 {
				if werr := bw.Flush(); werr != nil {
					return werr
				}
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return bw.Flush()
		default:
			bw.Flush()
			return fmt.Errorf("reading: %w", err)
		}
	}
}
