// Command diagrelay runs the diagnostics relay: the demo, the JSON-RPC
// service, the child-side client commands and the sanitizer as a filter.
//
// Run "diagrelay help" for the commands, "diagrelay help CMD" for one.
// Exit codes: 0 success, 1 the operation failed, 2 usage error.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/internal/cli"
)

// command is one subcommand. run gets the arguments after the command's
// name and returns the process exit code.
type command struct {
	name string
	help *help
	run  func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands is every command, in the order help lists them. Adding one is
// a line here, a help value and a run function in its own file.
var commands = []command{
	{"serve", &serveHelp, runServe},
	{"report", &reportHelp, runReport},
	{"probe", &probeHelp, runProbe},
	{"demo", &demoHelp, runDemo},
	{"watch", &watchHelp, runWatch},
	{"mailbox", &mailboxHelp, runMailbox},
	{"sanitize", &sanitizeHelp, runSanitize},
	{"version", &versionHelp, runVersion},
}

// help is what a command says about itself (see cli.Help).
type help = cli.Help

// The flag helpers every command uses.
var (
	newFlagSet        = cli.NewFlagSet
	parseFlags        = cli.Parse
	parseInterspersed = cli.ParseInterspersed
)

// The variables of serve and of the commands that find its socket and
// data directory as it does.
var (
	envRuntimeDir = "XDG_RUNTIME_DIR  the default socket is $XDG_RUNTIME_DIR/diagrelay.sock (else DIR/diagrelay.sock)"
	envStateHome  = "XDG_STATE_HOME   the default DIR is $XDG_STATE_HOME/diagrelay (else ~/.local/state/diagrelay)"
)

// childEnv is the environment of the child-side commands.
var childEnv = []string{
	"DIAGRELAY_SOCKET  the service's Unix socket, set by the manager host",
	"DIAGRELAY_TOKEN   this child's token from runtime.open, set by the manager host",
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "help":
		return runHelp(args[1:], stdin, stdout, stderr)
	case "-version", "--version":
		return runVersion(args[1:], stdin, stdout, stderr)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "diagrelay: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func lookup(name string) (command, bool) {
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands[i], true
}

// runHelp: "help" lists the commands, "help CMD" prints CMD's help (what
// CMD -h prints), both on stdout with exit 0.
func runHelp(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintln(stderr, "usage: diagrelay help [command]")
		return 2
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "diagrelay help: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	c.run([]string{"-h"}, stdin, stdout, stdout)
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "diagrelay %s relays diagnostics from child agent sessions to their parent, safely.\n\n", capability.Version)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "\tdiagrelay %s\n", c.help.Usage)
		fmt.Fprintf(w, "\t\t%s\n", c.help.Short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "diagrelay help <command>" (or "diagrelay <command> -h") for more about a command.`)
	fmt.Fprintln(w, "Exit codes: 0 success, 1 the operation failed, 2 usage error.")
}
