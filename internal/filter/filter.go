// Package filter is diagrelay sanitize's stream: records in, each cleaned
// as a report is cleaned, records out.
package filter

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/diagrelay/diagrelay/sanitize"
)

// Records copies the records of in, each ended by delim, to out through a
// sanitize.Writer cutting each to limit UTF-16 code units (0: no limit),
// each ended by delim; the last gets its delim even if in lacked it. A
// record is never held whole: memory is the two 64 KiB buffers and what
// the Writer holds (bounded by the limit, or by one NFC segment without a
// limit).
func Records(in io.Reader, out io.Writer, limit int, delim byte) error {
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriterSize(out, 64<<10)
	sw := sanitize.NewWriter(bw, limit)
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
