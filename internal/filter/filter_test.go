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

// RedactedRecords: each record sanitized, redacted, then cut.
func TestRedactedRecords(t *testing.T) {
	tok := "ghp_" + strings.Repeat("Q2xM9zR4pW", 3) + "7vK3nT"
	check := func(in string, limit int, want string) {
		t.Helper()
		var out bytes.Buffer
		if err := RedactedRecords(strings.NewReader(in), &out, limit, '\n'); err != nil || out.String() != want {
			t.Errorf("RedactedRecords(%q, %d) = %q, %v; want %q", in, limit, out.String(), err, want)
		}
	}
	check("token \x1b[31m"+tok+"\nclean line\n", 1000, "token [REDACTED:github-pat]\nclean line\n")
	check("", 1000, "")
	check("abcdef\n", 3, "ab…\n")
	// A token straddling the cut leaves no prefix.
	check("0123456789 "+tok, 20, "0123456789 [REDACTE…\n")
	// What Records alone does with it: the prefix survives.
	var plain bytes.Buffer
	Records(strings.NewReader("0123456789 "+tok), &plain, 20, '\n')
	if !strings.Contains(plain.String(), "ghp_") {
		t.Errorf("the test is void: %q", plain.String())
	}
	// Records past MaxRedactedRecord are cut there, --limit 0 included.
	var out bytes.Buffer
	if err := RedactedRecords(strings.NewReader(strings.Repeat("x", MaxRedactedRecord+10)+"\nnext\n"), &out, 0, '\n'); err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(out.String(), "\n")
	if len(first) != MaxRedactedRecord-1+len("…") || rest != "next\n" {
		t.Errorf("long record: %d bytes, rest %q", len(first), rest)
	}
}
