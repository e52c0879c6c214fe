// Command diagrelay runs the diagnostics relay: the demo, the JSON-RPC
// service, the child-side client commands and the sanitizer as a filter.
//
// Run "diagrelay help" for the commands, "diagrelay help CMD" for one.
// Exit codes: 0 success, 1 the operation failed, 2 usage error.
package main

import (
	"io"
	"os"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/internal/cli"
)

// newRoot returns the command tree, in the order help lists it: fresh for
// every run, since each command's flags are bound to its own variables.
// Adding a command is a line here and a constructor in its own file.
func newRoot() *cli.Command {
	return &cli.Command{
		Name: "diagrelay",
		Long: "diagrelay " + capability.Version + " relays diagnostics from child agent sessions to their parent, safely.",
		Exit: []string{"0 success", "1 the operation failed", "2 usage error"},
		Commands: []*cli.Command{
			serveCommand(),
			reportCommand(),
			probeCommand(),
			demoCommand(),
			watchCommand(),
			threadCommand(),
			mailboxCommand(),
			sanitizeCommand(),
			versionCommand(),
		},
	}
}

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
	return cli.Main(newRoot(), args, &cli.IO{In: stdin, Out: stdout, Err: stderr})
}
