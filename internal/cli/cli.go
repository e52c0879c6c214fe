// Package cli is the command type every diagrelay command is a value of,
// and the one place that parses their flags and prints their help.
//
// A Command is data: its usage line, summary, description, flags,
// environment and exit codes. "diagrelay help X" prints X's help from that
// data and never runs X. Main parses and checks a command's flags and
// operands before its Run is called, so a usage error never costs a
// connection; it is said in one line, with a pointer to "diagrelay help X".
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Command is one command or subcommand. Its flags are defined on Flag
// before Main runs; Run is called with the operands once they and the
// flags have passed every check.
type Command struct {
	// Name is the word that selects the command.
	Name string
	// Aliases are other words that select it ("--version" for version).
	Aliases []string
	// Usage is the usage line after the command's name: "[--data DIR] PATH".
	Usage string
	// Short is the one-line summary the command list shows.
	Short string
	// Long is the description help prints (leading and trailing blank
	// lines are dropped).
	Long string
	// Env and Exit are the environment variables the command reads and
	// what its exit codes mean, one line each.
	Env, Exit []string

	// Flag is the command's flags.
	Flag flag.FlagSet
	// Interspersed lets flags follow operands ("report MSG --source x");
	// "--" ends the flags.
	Interspersed bool
	// ArgName names the operands in errors ("PATH"); MinArgs and MaxArgs
	// bound how many there are (MaxArgs < 0: no bound).
	ArgName          string
	MinArgs, MaxArgs int

	// Run runs the command. Its error decides the exit code: nil is 0, a
	// *UsageError 2, an *ExitError its Code, any other 1 (said on stderr
	// after the command's name).
	Run func(s *IO, args []string) error

	// Commands are the subcommands; a command with some and no Run needs
	// one of them.
	Commands []*Command

	parent *Command
}

// IO is a command's standard streams.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// UsageError is a usage error: Main says it in one line, points at the
// command's help and exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ExitError ends a command with Code; Err, if not nil, is said first.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Path is the command's words after the root's: "mailbox check"; the
// root's own name for the root.
func (c *Command) Path() string {
	if c.parent == nil || c.parent.parent == nil {
		return c.Name
	}
	return c.parent.Path() + " " + c.Name
}

// root returns the root of c's tree, whose Name is the program's
// ("diagrelay").
func (c *Command) root() *Command {
	for c.parent != nil {
		c = c.parent
	}
	return c
}

// full is "diagrelay mailbox check".
func (c *Command) full() string {
	if c.parent == nil {
		return c.Name
	}
	return c.root().Name + " " + c.Path()
}

// UsageLine is the command's full usage line: "diagrelay report --level …".
func (c *Command) UsageLine() string {
	return strings.TrimSpace(c.full() + " " + c.Usage)
}

// Lookup returns the subcommand named or aliased name, or nil.
func (c *Command) Lookup(name string) *Command {
	for _, sub := range c.Commands {
		if sub.Name == name {
			return sub
		}
		for _, a := range sub.Aliases {
			if a == name {
				return sub
			}
		}
	}
	return nil
}

// Link makes c the root of its tree: every subcommand, below c, knows its
// parent, so that its usage line and help name the whole path. Main calls
// it; it returns c.
func (c *Command) Link() *Command {
	for _, sub := range c.Commands {
		sub.parent = c
		sub.Link()
	}
	return c
}

// Main runs the command args select below root (root's own Name is the
// program's) and returns the exit code: 0 success, 1 failure, 2 usage
// error. "help [CMD...]", and -h or --help alone, print help on s.Out;
// "CMD -h" prints CMD's help on s.Err, as package flag does, and exits 0.
func Main(root *Command, args []string, s *IO) int {
	root.Link()
	if len(args) == 0 {
		root.PrintHelp(s.Err)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		root.PrintHelp(s.Out)
		return 0
	case "help":
		return help(root, args[1:], s)
	}
	c := root
	for {
		if len(c.Commands) == 0 || len(args) == 0 {
			break
		}
		if isHelpFlag(args[0]) && c != root {
			c.PrintHelp(s.Err)
			return 0
		}
		sub := c.Lookup(args[0])
		if sub == nil {
			if c.Run != nil {
				break
			}
			return c.usageError(s.Err, unknown(c, args[0]))
		}
		c, args = sub, args[1:]
	}
	if c.Run == nil {
		return c.usageError(s.Err, Usagef("give a subcommand: %s", c.names()))
	}
	operands, err := c.parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.PrintHelp(s.Err)
		return 0
	case err != nil:
		return c.usageError(s.Err, err)
	}
	return c.exit(s.Err, c.Run(s, operands))
}

func isHelpFlag(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

func unknown(c *Command, name string) error {
	if c.parent == nil {
		return Usagef("unknown command %q", name)
	}
	return Usagef("unknown subcommand %q (there is: %s)", name, c.names())
}

// names lists the subcommands' names: "check" or "open, close, status".
func (c *Command) names() string {
	var names []string
	for _, sub := range c.Commands {
		names = append(names, sub.Name)
	}
	return strings.Join(names, ", ")
}

// help runs "help [CMD...]": the help of the command named, from its data.
func help(root *Command, args []string, s *IO) int {
	c := root
	for _, name := range args {
		sub := c.Lookup(name)
		if sub == nil {
			msg := unknown(c, name).Error()
			fmt.Fprintf(s.Err, "%s help: %s\nRun '%s help' for the commands.\n", root.Name, msg, root.Name)
			return 2
		}
		c = sub
	}
	c.PrintHelp(s.Out)
	return 0
}

// parse parses the flags and checks the operands' count.
func (c *Command) parse(args []string) ([]string, error) {
	c.Flag.Init(c.full(), flag.ContinueOnError)
	c.Flag.SetOutput(io.Discard) // the errors are said by Main, in one line
	c.Flag.Usage = func() {}
	var operands []string
	for {
		if err := c.Flag.Parse(args); err != nil {
			return nil, err
		}
		rest := c.Flag.Args()
		n := len(args) - len(rest)
		if !c.Interspersed || len(rest) == 0 || n > 0 && args[n-1] == "--" {
			operands = append(operands, rest...)
			break
		}
		operands, args = append(operands, rest[0]), rest[1:]
	}
	switch {
	case c.MaxArgs >= 0 && len(operands) > c.MaxArgs:
		return nil, Usagef("unexpected argument %q", operands[c.MaxArgs])
	case len(operands) < c.MinArgs:
		return nil, Usagef("missing %s", c.ArgName)
	}
	return operands, nil
}

// usageError says err in one line, points at the help, and returns 2.
func (c *Command) usageError(w io.Writer, err error) int {
	if c.parent == nil {
		fmt.Fprintf(w, "%s: %v\nRun '%s help' for the commands.\n", c.Name, err, c.Name)
		return 2
	}
	fmt.Fprintf(w, "%s: %v\nRun '%s help %s' for usage.\n", c.full(), err, c.root().Name, c.Path())
	return 2
}

// exit turns Run's error into the exit code, saying it on w.
func (c *Command) exit(w io.Writer, err error) int {
	var ue *UsageError
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return c.usageError(w, ue)
	case errors.As(err, &ee):
		if ee.Err != nil {
			fmt.Fprintf(w, "%s: %v\n", c.full(), ee.Err)
		}
		return ee.Code
	default:
		fmt.Fprintf(w, "%s: %v\n", c.full(), err)
		return 1
	}
}

// FlagGiven reports whether the flag name was given on the command line.
func (c *Command) FlagGiven(name string) bool {
	set := false
	c.Flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
