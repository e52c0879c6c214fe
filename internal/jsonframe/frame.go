package jsonframe

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// MaxFrame is the largest frame, newline excluded, that the server reads.
const MaxFrame = 64 << 10

// ErrTooLarge is returned by Reader.next for a line over MaxFrame;
// the rest of that line has been skipped and the next call reads the next one.
var ErrTooLarge = errors.New("frame over 64 KiB")

// Reader splits a stream into newline-terminated frames of at most
// MaxFrame bytes without ever holding more than that in memory.
//
// Its read buffer is borrowed from readPool only while it holds bytes not
// yet framed, or the frame Next returned last (until the next call): a
// connection that waits for its peer holds none (with 10,000
// children connected that was 40 MB of 4 KiB buffers, and each new
// connection's buffer was a tenth of the service's garbage). To wait
// without a buffer it needs ready, which blocks until the input has bytes
// (or has ended); without one (the stdio host) a read holds a buffer
// while it waits.
type Reader struct {
	src   io.Reader
	ready func() error // nil, or blocks until src can be read without waiting
	rbuf  *[readBuffer]byte
	r, w  int    // rbuf[r:w] is not yet framed
	buf   []byte // the frame being assembled
	err   error  // from src, returned once the buffered bytes are framed
}

// readBuffer is the size of a connection's read buffer: small, so that
// thousands of connections (or a connect churn) cost little; a large frame
// takes more reads, each charged (cost.go).
const readBuffer = 4 << 10

var readPool = sync.Pool{New: func() any { return new([readBuffer]byte) }}

func NewReader(src io.Reader, ready func() error) *Reader {
	return &Reader{src: src, ready: ready}
}

// next returns the next frame without its line ending ("\n" or "\r\n").
// The slice is valid until the following call. At the end of input a final
// unterminated frame is returned, then io.EOF.
func (f *Reader) Next() ([]byte, error) {
	if f.r == f.w {
		f.Release() // the last frame was returned from it, and is done with
	}
	if cap(f.buf) > 4*readBuffer {
		f.buf = nil // a large frame's buffer is not kept for the next
	}
	f.buf = f.buf[:0]
	tooLarge := false
	for {
		if f.r == f.w {
			if err := f.err; err != nil {
				f.err = nil // returned once, as bufio does
				if err == io.EOF && (len(f.buf) > 0 || tooLarge) {
					f.err = io.EOF // and the end again at the next call
					break          // a last line without a newline still counts as a frame
				}
				return nil, err
			}
			f.fill()
			continue
		}
		chunk := f.rbuf[f.r:f.w]
		i := bytes.IndexByte(chunk, '\n')
		if i >= 0 {
			chunk = chunk[:i+1]
		}
		f.r += len(chunk)
		if i >= 0 && len(f.buf) == 0 && !tooLarge {
			// A whole line in the read buffer is returned from it, not
			// copied: a connection keeps no frame buffer of its own
			// unless a line spans reads.
			return trimEOL(chunk), nil
		}
		if !tooLarge {
			if len(f.buf)+len(chunk) > MaxFrame+2 { // +2: room for "\r\n"
				tooLarge = true
				f.buf = f.buf[:0]
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		if i >= 0 {
			break
		}
	}
	if tooLarge {
		return nil, ErrTooLarge
	}
	line := trimEOL(f.buf)
	if len(line) > MaxFrame {
		return nil, ErrTooLarge
	}
	return line, nil
}

// fill reads into the empty buffer, borrowed for it, until it holds
// bytes or the input fails; the error is kept for next.
func (f *Reader) fill() {
	f.Release() // empty: not held while waiting
	if f.ready != nil {
		if err := f.ready(); err != nil {
			f.err = err
			return
		}
	}
	if f.rbuf == nil {
		f.rbuf = readPool.Get().(*[readBuffer]byte)
	}
	for range maxEmptyReads {
		n, err := f.src.Read(f.rbuf[:])
		f.r, f.w = 0, n
		if err != nil || n > 0 {
			f.err = err
			if n == 0 {
				f.Release()
			}
			return
		}
	}
	f.Release()
	f.err = io.ErrNoProgress
}

// maxEmptyReads is how many reads in a row may return nothing and no
// error before the input counts as broken (bufio's bound).
const maxEmptyReads = 100

// release gives the empty buffer back.
func (f *Reader) Release() {
	if f.rbuf != nil {
		readPool.Put(f.rbuf)
		f.rbuf = nil
	}
	f.r, f.w = 0, 0
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
