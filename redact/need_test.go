package redact

import (
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// A group of strings is taken only where language gives them as they
// are: no folded case, no uppercase letter (a range holding one counts),
// nothing outside ASCII, no space, no string shorter than two bytes.
func TestStringsGroup(t *testing.T) {
	for expr, want := range map[string]string{
		`-(?:u|-user)`:     "--user -u",
		`(?i)-(?:u|-user)`: "",
		`[0-z]x`:           "",
		`-[A-C]`:           "",
		`[a-c]x`:           "ax bx cx",
		`-(?:u| user)`:     "",
		`é-u`:              "",
		`-(?:u|)`:          "",
	} {
		re, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range stringsGroup(re) {
			got = append(got, l.s)
		}
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %q, want %q", expr, got, want)
		}
	}
}
