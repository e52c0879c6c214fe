package sanitize

import (
	"io"
	"unicode/utf8"
)

// A Writer cleans one text that arrives in pieces, such as a long line read
// from a pipe, and writes the result to an underlying writer. The bytes
// written to it between Reset (or NewWriter) and Close form the text; what
// reaches the underlying writer is exactly Clean(text, limit).
//
// Memory does not grow with the text. With limit <= 0 the result is written
// as it becomes final: between writes the Writer holds only the current
// NFC segment (at most 31 characters), a pending space or joiners, and at
// most 3 bytes of an incomplete UTF-8 sequence, in a buffer about as large
// as the largest Write. With a limit, the result is held until Close (at
// most about 3*limit bytes), and input after the limit is certainly
// exceeded is discarded without being examined.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	dst    io.Writer
	limit  int
	c      cleaner[[]byte]
	carry  [2 * utf8.UTFMax]byte // an incomplete UTF-8 sequence from the last Write
	ncarry int
	err    error
}

// NewWriter returns a Writer that writes Clean(text, limit) to dst.
func NewWriter(dst io.Writer, limit int) *Writer {
	w := &Writer{limit: limit}
	w.Reset(dst)
	return w
}

// Reset discards any unfinished text and starts a new one written to dst.
func (w *Writer) Reset(dst io.Writer) {
	w.c = cleaner[[]byte]{limit: w.limit, mat: true, out: w.c.out[:0], tmp: w.c.tmp, it: w.c.it}
	w.dst, w.ncarry, w.err = dst, 0, nil
}

// Write adds p to the text. It returns len(p) unless writing to the
// underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for w.ncarry > 0 && len(p) > 0 && !w.c.done {
		// Complete the carried sequence with at most 3 more bytes.
		k := copy(w.carry[w.ncarry:w.ncarry+utf8.UTFMax-1], p)
		m := w.feed(w.carry[:w.ncarry+k], false)
		if m < w.ncarry { // still incomplete: p was shorter than needed
			w.ncarry += k
			p = p[k:]
			break
		}
		p = p[m-w.ncarry:]
		w.ncarry = 0
	}
	if len(p) > 0 && !w.c.done {
		m := w.feed(p, false)
		w.ncarry = copy(w.carry[:], p[m:])
	}
	return n, w.flush()
}

// Close ends the text, writes the rest of the result, and readies the
// Writer for a new text to the same underlying writer. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.ncarry > 0 && !w.c.done {
		w.feed(w.carry[:w.ncarry], true)
	}
	w.c.finish()
	_, err := io.WriteString(w.dst, w.c.result())
	w.Reset(w.dst)
	w.err = err
	return err
}

// feed runs the cleaner over p in place, then detaches the cleaner from it
// (p may change after Write returns): everything the output still needs
// from p is copied into the Writer's buffer.
func (w *Writer) feed(p []byte, final bool) int {
	m := w.c.feed(p, final)
	w.c.detach()
	if w.c.done {
		return len(p)
	}
	return m
}

// flush writes the part of the output that can no longer change. With a
// limit nothing is final before Close: a cut may still be needed.
func (w *Writer) flush() error {
	c := &w.c
	if c.limit > 0 || c.seg == 0 {
		return nil
	}
	_, err := w.dst.Write(c.out[:c.seg])
	c.out = c.out[:copy(c.out, c.out[c.seg:])]
	c.units -= c.segUnits
	c.seg, c.segUnits = 0, 0
	w.err = err
	return err
}
