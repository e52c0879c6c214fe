package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		operands []string
		level    string
		code     int
		ok       bool
	}{
		{[]string{"a", "--level", "x", "b"}, []string{"a", "b"}, "x", 0, true},
		{[]string{"--level=x", "a", "--", "--level", "y"}, []string{"a", "--level", "y"}, "x", 0, true},
		{[]string{"-", "--level", "x"}, []string{"-"}, "x", 0, true},
		{[]string{"a", "--nope"}, nil, "", 2, false},
		{[]string{"a", "-h"}, nil, "", 0, false},
	} {
		var out bytes.Buffer
		fs := NewFlagSet("t", &out, &Help{Usage: "t [--level L] ARGS", Exit: []string{"0  fine"}})
		level := fs.String("level", "", "a level")
		ops, code, ok := ParseInterspersed(fs, tt.args)
		if !slices.Equal(ops, tt.operands) || code != tt.code || ok != tt.ok || (ok && *level != tt.level) {
			t.Errorf("%q: %q %d %v level %q", tt.args, ops, code, ok, *level)
		}
		if !ok && !strings.Contains(out.String(), "usage: diagrelay t [--level L] ARGS") {
			t.Errorf("%q: no usage in %q", tt.args, out.String())
		}
		if slices.Contains(tt.args, "-h") && !strings.Contains(out.String(), "Exit codes:\n  0  fine") {
			t.Errorf("-h: %q", out.String())
		}
	}
}
