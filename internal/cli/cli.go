// Package cli is what every diagrelay command shares: its help, and flag
// parsing with Go's manners (-h exits 0, a bad flag exits 2).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Help is what a command says about itself: the line after "usage:
// diagrelay", a one-line summary, a description, the environment variables
// it reads and what its exit codes mean.
type Help struct {
	Usage, Short, Long string
	Env, Exit          []string
}

// NewFlagSet returns a FlagSet for a command whose -h prints, to stderr
// (help CMD passes stdout), the usage line, the description, the flags,
// the environment and the exit codes.
func NewFlagSet(name string, stderr io.Writer, h *Help) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: diagrelay %s\n", h.Usage)
		if h.Long != "" {
			fmt.Fprintf(stderr, "\n%s\n", strings.TrimSpace(h.Long))
		}
		if hasFlags(fs) {
			fmt.Fprintln(stderr, "\nFlags:")
			fs.PrintDefaults()
		}
		section(stderr, "Environment", h.Env)
		section(stderr, "Exit codes", h.Exit)
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) (has bool) {
	fs.VisitAll(func(*flag.Flag) { has = true })
	return has
}

func section(w io.Writer, title string, lines []string) {
	if len(lines) > 0 {
		fmt.Fprintf(w, "\n%s:\n  %s\n", title, strings.Join(lines, "\n  "))
	}
}

// Parse parses a command's flags. When it returns false the
// command ends with code: 0 after -h (the usage was printed), 2 after a bad
// flag (the error and the usage were printed).
func Parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	default:
		return 2, false
	}
}

// ParseInterspersed is Parse for a command with operands: flags may
// follow them too ("report --level info msg --source x"); "--" ends the
// flags. It returns the operands.
func ParseInterspersed(fs *flag.FlagSet, args []string) (operands []string, code int, ok bool) {
	for {
		if code, ok := Parse(fs, args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if n := len(args) - len(rest); len(rest) == 0 || n > 0 && args[n-1] == "--" {
			return append(operands, rest...), 0, true
		}
		operands, args = append(operands, rest[0]), rest[1:]
	}
}
