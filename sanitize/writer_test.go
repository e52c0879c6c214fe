package sanitize

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestWriterTextsInSequence(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 6)
	for _, text := range []string{"first \x1b]0;unterminated", "second text, longer", "", "th\u200Bird"} {
		if _, err := w.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		buf.WriteByte('|')
	}
	if got, want := buf.String(), "first|secon…||third|"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterReportsWriteErrors(t *testing.T) {
	w := NewWriter(&failingWriter{n: 1}, 0)
	line := []byte(strings.Repeat("word ", 10))
	var err error
	for range 5 {
		if _, err = w.Write(line); err != nil {
			break
		}
	}
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("Write error = %v, want disk full", err)
	}
	if _, err := w.Write(line); err == nil {
		t.Error("Write after a failure succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failure succeeded")
	}
	w.Reset(&bytes.Buffer{})
	if _, err := w.Write(line); err != nil {
		t.Errorf("Write after Reset: %v", err)
	}
}

// The property tables are built on first use; concurrent first uses of the
// same blocks must be safe (run with -race). These scripts appear in no
// other test.
func TestConcurrentFirstUse(t *testing.T) {
	texts := []string{"ꀀꀁꀂ ꁀꁁ", "𐀀𐀁𐀂 𐀃", "ᚠᚡᚢ ᚣ", "ꦄꦏꦱꦫ", "ߊߋߌ"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for _, s := range texts[g%len(texts):] {
				if got := Clean(s, 0); got != s {
					t.Errorf("Clean(%q) = %q", s, got)
				}
			}
		})
	}
	wg.Wait()
}
