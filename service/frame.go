package service

import (
	"bufio"
	"errors"
	"io"
)

// MaxFrame is the largest frame, newline excluded, that the server reads.
const MaxFrame = 64 << 10

// errFrameTooLarge is returned by frameReader.next for a line over MaxFrame;
// the rest of that line has been skipped and the next call reads the next one.
var errFrameTooLarge = errors.New("frame over 64 KiB")

// frameReader splits a stream into newline-terminated frames of at most
// MaxFrame bytes without ever holding more than that in memory.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

// readBuffer is the size of a connection's read buffer: small, so that
// thousands of connections (or a connect churn) cost little; a large frame
// takes more reads, each charged (cost.go).
const readBuffer = 4 << 10

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, readBuffer)}
}

// next returns the next frame without its line ending ("\n" or "\r\n").
// The slice is valid until the following call. At the end of input a final
// unterminated frame is returned, then io.EOF.
func (f *frameReader) next() ([]byte, error) {
	if cap(f.buf) > 4*readBuffer {
		f.buf = nil // a large frame's buffer is not kept for the next
	}
	f.buf = f.buf[:0]
	tooLarge := false
	for {
		chunk, err := f.r.ReadSlice('\n')
		if !tooLarge {
			if len(f.buf)+len(chunk) > MaxFrame+2 { // +2: room for "\r\n"
				tooLarge = true
				f.buf = f.buf[:0]
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(f.buf) > 0 || tooLarge):
			// A last line without a newline still counts as a frame.
		case err != nil:
			return nil, err
		}
		if tooLarge {
			return nil, errFrameTooLarge
		}
		line := trimEOL(f.buf)
		if len(line) > MaxFrame {
			return nil, errFrameTooLarge
		}
		return line, nil
	}
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
