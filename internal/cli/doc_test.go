package cli

import (
	"slices"
	"strings"
	"testing"
)

// A section's fields and description become the command's, exit lines kept
// as written (a continuation's leading spaces included); the preamble and
// the blank lines around a description are not part of it.
func TestParseDoc(t *testing.T) {
	d, err := ParseDoc(`The preamble: [not a section] and no fields.

[box]
short: the box

[box check]
usage: [--wait D] PATH
short: check it
exit: 0  clean
exit:    (or nothing to check)
exit: 2  usage error

Checks PATH.

  Indented stays.


[other]
short: no description
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Paths(), []string{"box", "box check", "other"}; !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
	c := d.Command("box check")
	if c.Name != "check" || c.Usage != "[--wait D] PATH" || c.Short != "check it" ||
		c.Long != "Checks PATH.\n\n  Indented stays." ||
		!slices.Equal(c.Exit, []string{"0  clean", "   (or nothing to check)", "2  usage error"}) {
		t.Errorf("box check: %+v", c)
	}
	if c := d.Command("other"); c.Long != "" || c.Exit != nil {
		t.Errorf("other: long %q, exit %q", c.Long, c.Exit)
	}
	c.Exit[0] = "changed"
	if d.Command("box check").Exit[0] != "0  clean" {
		t.Error("a command's exit lines are shared with the doc")
	}
}

func TestParseDocErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"[a]\nshort: x\n[a]\n", "line 3: [a] again"},
		{"[a]\nsummary: x\n", `line 2: no field "summary"`},
		{"[a]\nshort x\n", `line 2: want "field: value"`},
	} {
		if _, err := ParseDoc(tt.src); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.src, err, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Command of a path with no section did not panic")
		}
	}()
	MustParseDoc("[a]\n").Command("b")
}
