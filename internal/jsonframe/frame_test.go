package jsonframe

import (
	"errors"
	"io"
	"strings"
	"testing"
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
