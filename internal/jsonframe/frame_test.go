package jsonframe

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFrameReader(t *testing.T) {
	exact := strings.Repeat("a", MaxFrame)
	in := "one\r\ntwo\n\n" + exact + "\n" + exact + "b\n" + strings.Repeat("c", 3*MaxFrame) + "\nlast"
	fr := NewReader(strings.NewReader(in), nil)
	want := []struct {
		frame string
		err   error
	}{
		{"one", nil}, {"two", nil}, {"", nil}, {exact, nil},
		{"", ErrTooLarge}, {"", ErrTooLarge}, {"last", nil}, {"", io.EOF},
	}
	for i, w := range want {
		got, err := fr.Next()
		if !errors.Is(err, w.err) || (err == nil && string(got) != w.frame) {
			t.Fatalf("frame %d: got %d bytes, %v; want %d bytes, %v", i, len(got), err, len(w.frame), w.err)
		}
	}
}

// The reader never buffers more than one frame's worth, however long the line.
func TestFrameReaderMemoryIsBounded(t *testing.T) {
	fr := NewReader(io.MultiReader(strings.NewReader(strings.Repeat("x", 50<<20)), strings.NewReader("\nok\n")), nil)
	if _, err := fr.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatal(err)
	}
	if cap(fr.buf) > 2*MaxFrame {
		t.Fatalf("buffer grew to %d bytes", cap(fr.buf))
	}
	if got, err := fr.Next(); err != nil || string(got) != "ok" {
		t.Fatalf("%q %v", got, err)
	}
}

// However the input's reads are cut, the frames are the same: whole lines
// in the read buffer are returned from it, lines that span reads are
// assembled.
func TestFrameReaderAnyReads(t *testing.T) {
	var in strings.Builder
	var want []string
	for i := range 300 {
		line := strings.Repeat(string(rune('a'+i%26)), i*37%(2*readBuffer))
		want = append(want, line)
		in.WriteString(line + "\n")
	}
	cuts := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
	}
	for name, cut := range cuts {
		fr := NewReader(cut(strings.NewReader(in.String())), nil)
		for i, w := range want {
			got, err := fr.Next()
			if err != nil || string(got) != w {
				t.Fatalf("%s: frame %d: got %d bytes, %v; want %d bytes", name, i, len(got), err, len(w))
			}
		}
		if _, err := fr.Next(); err != io.EOF {
			t.Fatalf("%s: after the frames: %v", name, err)
		}
	}
}

// A reader that waits for its input (ready) holds no read buffer while it
// waits, though the frame it returned last was in one.
func TestFrameReaderWaitsWithoutBuffer(t *testing.T) {
	pr, pw := io.Pipe()
	var fr *Reader
	held := 0
	fr = NewReader(pr, func() error {
		if fr.rbuf != nil {
			held++
		}
		return nil
	})
	go func() {
		for _, s := range []string{"one\ntwo\n", "thr", "ee\n"} {
			pw.Write([]byte(s))
		}
		pw.Close()
	}()
	for _, w := range []string{"one", "two", "three"} {
		if got, err := fr.Next(); err != nil || string(got) != w {
			t.Fatalf("got %q %v, want %q", got, err, w)
		}
		if w != "three" && fr.buf != nil {
			t.Fatalf("%q, a whole line in one read, was copied into a frame buffer", w)
		}
	}
	if _, err := fr.Next(); err != io.EOF {
		t.Fatal(err)
	}
	if held != 0 || fr.rbuf != nil {
		t.Fatalf("a buffer was held during %d waits; held at the end: %v", held, fr.rbuf != nil)
	}
}
