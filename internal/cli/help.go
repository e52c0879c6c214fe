package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// PrintHelp writes c's help to w: for the root, the command list; for a
// command, its usage line, description, flags, subcommands, environment
// and exit codes. It reads only c's data.
func (c *Command) PrintHelp(w io.Writer) {
	if c.parent == nil {
		c.printList(w)
		return
	}
	fmt.Fprintf(w, "usage: %s\n", c.UsageLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "   or: %s %s\n", c.root().Name, strings.Join(c.Aliases, ", "))
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(w, "\n%s\n", long)
	} else if c.Short != "" {
		fmt.Fprintf(w, "\n%s.\n", capitalize(c.Short))
	}
	if c.hasFlags() {
		fmt.Fprintln(w, "\nFlags:")
		out := c.Flag.Output()
		c.Flag.SetOutput(w)
		c.Flag.PrintDefaults()
		c.Flag.SetOutput(out)
	}
	if len(c.Commands) > 0 {
		fmt.Fprintln(w, "\nCommands:")
		for _, sub := range c.Commands {
			fmt.Fprintf(w, "  %s %s\n        %s\n", c.full(), strings.TrimSpace(sub.Name+" "+sub.Usage), sub.Short)
		}
		fmt.Fprintf(w, "\nRun '%s help %s <command>' for more about one.\n", c.root().Name, c.Path())
	}
	section(w, "Environment", c.Env)
	section(w, "Exit codes", c.Exit)
}

// printList is the root's help: every command's usage line and summary.
func (c *Command) printList(w io.Writer) {
	if c.Long != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(c.Long))
	}
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w)
	for _, sub := range c.Commands {
		// A command that is only a group lists its subcommands instead.
		group := sub.Commands
		if len(group) == 0 || sub.Run != nil {
			group = []*Command{sub}
		}
		for _, g := range group {
			fmt.Fprintf(w, "\t%s\n", g.UsageLine())
			fmt.Fprintf(w, "\t\t%s\n", g.Short)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Run '%s help <command>' (or '%s <command> -h') for more about a command.\n", c.Name, c.Name)
	if len(c.Exit) > 0 {
		fmt.Fprintf(w, "Exit codes: %s.\n", strings.Join(c.Exit, ", "))
	}
}

func (c *Command) hasFlags() (has bool) {
	c.Flag.VisitAll(func(*flag.Flag) { has = true })
	return has
}

func section(w io.Writer, title string, lines []string) {
	if len(lines) > 0 {
		fmt.Fprintf(w, "\n%s:\n  %s\n", title, strings.Join(lines, "\n  "))
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checked is a string flag whose every value given is checked as it is
// parsed.
type checked struct {
	p     *string
	check func(string) error
}

func (v checked) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v checked) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

// Checked defines a string flag on fs whose values must pass check; the
// parse fails with check's error otherwise. The default is not checked.
func Checked(fs *flag.FlagSet, name, value, usage string, check func(string) error) *string {
	p := new(string)
	*p = value
	fs.Var(checked{p, check}, name, usage)
	return p
}

// Choice defines a string flag on fs that takes only one of allowed
// (exactly, case included); its usage line ends with them, a|b|c.
func Choice(fs *flag.FlagSet, name, value, usage string, allowed ...string) *string {
	list := OneOf(allowed)
	return Checked(fs, name, value, usage+": `"+strings.Join(allowed, "|")+"`", func(s string) error {
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("want %s", list)
	})
}

// OneOf lists words as "a, b or c".
func OneOf(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
