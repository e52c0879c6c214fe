package cli

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// tree is a small program: "t report" with a checked flag and operands,
// "t box check" below a command without Run.
type tree struct {
	root     *Command
	ran      []string // the operands of the last run, nil if none ran
	level    *string
	runCount int
}

func newTree() *tree {
	t := &tree{}
	report := &Command{Name: "report", Usage: "--level L MESSAGE...", Short: "report one",
		Long: "Reports one message.", Exit: []string{"0  fine"}, Interspersed: true,
		ArgName: "MESSAGE", MinArgs: 1, MaxArgs: -1}
	t.level = Choice(&report.Flag, "level", "", "the level", "info", "warning")
	report.Run = func(s *IO, args []string) error {
		t.runCount++
		t.ran = args
		switch args[0] {
		case "fail":
			return errors.New("it broke")
		case "usage":
			return Usagef("no such thing")
		case "quiet":
			return &ExitError{Code: 3}
		}
		return nil
	}
	check := &Command{Name: "check", Short: "check it", Run: func(*IO, []string) error { t.runCount++; return nil }}
	box := &Command{Name: "box", Short: "the box", Commands: []*Command{check}}
	version := &Command{Name: "version", Aliases: []string{"-v", "--version"}, Short: "print it",
		Run: func(s *IO, _ []string) error { s.Out.Write([]byte("v1\n")); return nil }}
	t.root = &Command{Name: "t", Commands: []*Command{report, box, version}}
	return t
}

func (t *tree) main(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Main(t.root, args, &IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func TestMainRunsAndExits(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		code     int
		operands []string
		stderr   string
	}{
		{[]string{"report", "a", "--level", "info", "b"}, 0, []string{"a", "b"}, ""},
		{[]string{"report", "--level=info", "a", "--", "--level", "y"}, 0, []string{"a", "--level", "y"}, ""},
		{[]string{"report", "--level", "info", "fail"}, 1, []string{"fail"}, "t report: it broke\n"},
		{[]string{"report", "--level", "info", "quiet"}, 3, []string{"quiet"}, ""},
		{[]string{"report", "--level", "info", "usage"}, 2, []string{"usage"},
			"t report: no such thing\nRun 't help report' for usage.\n"},
		// Usage errors: one line, the pointer, and Run never called.
		{[]string{"report", "--level", "WARN", "x"}, 2, nil,
			"t report: invalid value \"WARN\" for flag -level: want info or warning\nRun 't help report' for usage.\n"},
		{[]string{"report", "--level", "info"}, 2, nil, "t report: missing MESSAGE\nRun 't help report' for usage.\n"},
		{[]string{"report", "x", "--nope"}, 2, nil, "t report: flag provided but not defined: -nope\nRun 't help report' for usage.\n"},
		{[]string{"frob"}, 2, nil, "t: unknown command \"frob\"\nRun 't help' for the commands.\n"},
		{[]string{"box"}, 2, nil, "t box: give a subcommand: check\nRun 't help box' for usage.\n"},
		{[]string{"box", "nope"}, 2, nil, "t box: unknown subcommand \"nope\" (there is: check)\nRun 't help box' for usage.\n"},
		{[]string{"box", "check", "extra"}, 2, nil, "t box check: unexpected argument \"extra\"\nRun 't help box check' for usage.\n"},
	} {
		tr := newTree()
		_, stderr, code := tr.main(tt.args...)
		if code != tt.code || stderr != tt.stderr || !slices.Equal(tr.ran, tt.operands) {
			t.Errorf("%q: exit %d, stderr %q, ran with %q; want %d, %q, %q", tt.args, code, stderr, tr.ran, tt.code, tt.stderr, tt.operands)
		}
	}
}

// help X prints X's help from its data, on stdout, and never runs X.
func TestHelpNeverRuns(t *testing.T) {
	tr := newTree()
	for _, args := range [][]string{{"help", "report"}, {"help", "box", "check"}, {"help", "box"}} {
		out, errOut, code := tr.main(args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: t "+strings.Join(args[1:], " ")) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if tr.runCount != 0 {
		t.Errorf("help ran a command %d times", tr.runCount)
	}
	out, _, _ := tr.main("help", "report")
	for _, want := range []string{"Reports one message.", "-level info|warning", "the level: info|warning", "Exit codes:\n  0  fine"} {
		if !strings.Contains(out, want) {
			t.Errorf("help report lacks %q:\n%s", want, out)
		}
	}
	if out, _, _ := tr.main("help", "box"); !strings.Contains(out, "t box check\n        check it") {
		t.Errorf("help box does not list check:\n%s", out)
	}
	if _, errOut, code := tr.main("report", "-h"); code != 0 || !strings.HasPrefix(errOut, "usage: t report") || tr.runCount != 0 {
		t.Errorf("report -h: exit %d, stderr %q, ran %d", code, errOut, tr.runCount)
	}
	if _, errOut, code := tr.main("help", "nope"); code != 2 || !strings.Contains(errOut, `unknown command "nope"`) {
		t.Errorf("help nope: exit %d, stderr %q", code, errOut)
	}
}

func TestAliasesAndList(t *testing.T) {
	tr := newTree()
	for _, a := range []string{"version", "-v", "--version"} {
		if out, _, code := tr.main(a); code != 0 || out != "v1\n" {
			t.Errorf("%s: exit %d, %q", a, code, out)
		}
	}
	out, _, code := tr.main("help")
	if code != 0 || !strings.Contains(out, "\tt report --level L MESSAGE...\n\t\treport one\n") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if _, errOut, code := tr.main(); code != 2 || !strings.Contains(errOut, "Usage:") {
		t.Errorf("no command: exit %d, %q", code, errOut)
	}
}

func TestOneOf(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a b": "a or b", "a b c": "a, b or c"} {
		if got := OneOf(strings.Fields(in)); got != want {
			t.Errorf("OneOf(%q) = %q, want %q", in, got, want)
		}
	}
}
