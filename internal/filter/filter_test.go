package filter

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// One record out per record in, each cleaned and cut, the last ended even
// when the input did not end it; with NUL records a newline is content.
func TestRecords(t *testing.T) {
	check := func(in string, limit int, delim byte, want string) {
		t.Helper()
		var out bytes.Buffer
		if err := Records(strings.NewReader(in), &out, limit, delim); err != nil || out.String() != want {
			t.Errorf("Records(%q, %d) = %q, %v; want %q", in, limit, out.String(), err, want)
		}
	}
	check("a \x1b[31mred\x1b[0m line\nsecond\t\tline", 1000, '\n', "a red line\nsecond line\n")
	check("\n\n", 1000, '\n', "\n\n")
	check("", 1000, '\n', "")
	check("abcdef\nxy\n", 3, '\n', "ab…\nxy\n") // cut, the ellipsis counted
	check("one\ntwo\x00three", 0, 0, "one two\x00three\x00")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRecordsWriteError(t *testing.T) {
	err := Records(strings.NewReader(strings.Repeat("x\n", 100<<10)), failWriter{}, 1000, '\n')
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
}
