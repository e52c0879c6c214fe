package main

import (
	"fmt"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/hostdial"
	"github.com/diagrelay/diagrelay/internal/watch"
	"github.com/diagrelay/diagrelay/relay"
)

// threadCommand is the host's runtimes from a shell: open one for a child
// process, close it, and read the threads' status, through serve's socket
// with the host token.
func threadCommand() *cli.Command {
	return &cli.Command{
		Name:  "thread",
		Usage: "<command>",
		Short: "open, close and inspect child runtimes of a running serve, as its host",
		Long: `
Acts as serve's host over its Unix socket, with the token in DIR/host.token,
so a shell can host a child process:

  eval "$(diagrelay thread open /root/build)"
  my-extension-child      # reports with DIAGRELAY_SOCKET and DIAGRELAY_TOKEN
  diagrelay thread status /root/build`,
		Commands: []*cli.Command{threadOpenCommand(), threadCloseCommand(), threadStatusCommand(), threadListCommand()},
	}
}

var hostExit = []string{
	"0  done",
	"1  no serve, a wrong token, or the service refused (its JSON-RPC error on stderr)",
	"2  usage error",
}

// threadLeaf is a thread subcommand: the host flags, and a Run that gets
// the connection.
func threadLeaf(c *cli.Command, run func(s *cli.IO, h *client.Host, socket string, args []string) error) *cli.Command {
	c.Env, c.Exit = []string{envRuntimeDir, envStateHome}, hostExit
	if c.MaxArgs == 0 && c.ArgName != "" {
		c.MinArgs, c.MaxArgs = 1, 1
	}
	c.Interspersed = true
	var hf hostFlags
	hf.define(c)
	c.Run = func(s *cli.IO, args []string) error {
		socket, token, err := hf.resolve()
		if err != nil {
			return err
		}
		h, err := client.DialHost(socket, token)
		if err != nil {
			return hf.dialError(socket, err)
		}
		defer h.Close()
		return run(s, h, socket, args)
	}
	return c
}

func threadOpenCommand() *cli.Command {
	c := &cli.Command{
		Name:    "open",
		Usage:   "PATH [--parent P] [--owner O] [--json] [--socket PATH] [--data DIR]",
		Short:   "open a child runtime and print the environment for its process",
		ArgName: "PATH (the thread, such as /root/build)",
		Long: `
Opens a child runtime for thread PATH (runtime.open) and prints the
environment a child process needs, as one shell line:

  export DIAGRELAY_SOCKET=… DIAGRELAY_TOKEN=…

so that eval "$(diagrelay thread open PATH)" hosts the next commands of this
shell. Opening an open PATH again reopens it: a new token, the old one
revoked. --json prints {"path","token","generation","socket"} instead.`,
	}
	parent := c.Flag.String("parent", "", "the thread's parent `path` (must be PATH's lexical parent)")
	owner := c.Flag.String("owner", "", "the `path` of the thread that creates an independent root (a PATH not under /root)")
	asJSON := c.Flag.Bool("json", false, "print the runtime as JSON")
	return threadLeaf(c, func(s *cli.IO, h *client.Host, socket string, args []string) error {
		rt, err := h.Open(args[0], client.OpenOptions{Parent: *parent, Owner: *owner})
		if err != nil {
			return err
		}
		return hostdial.WriteRuntime(s.Out, socket, rt, *asJSON)
	})
}

func threadCloseCommand() *cli.Command {
	c := &cli.Command{
		Name:    "close",
		Usage:   "PATH [--socket PATH] [--data DIR]",
		Short:   "close a child runtime and revoke its token (its status stays)",
		ArgName: "PATH",
	}
	return threadLeaf(c, func(_ *cli.IO, h *client.Host, _ string, args []string) error {
		return h.CloseRuntime(args[0])
	})
}

func threadStatusCommand() *cli.Command {
	c := &cli.Command{
		Name:    "status",
		Usage:   "PATH [--json] [--socket PATH] [--data DIR]",
		Short:   "print a thread's status: its runtime, newest diagnostics and drop counts",
		ArgName: "PATH",
		Long: fmt.Sprintf(`
Prints thread PATH's status (thread.status): whether its runtime is open,
its generation, its %d newest delivered diagnostics, oldest first, and how
many reports were dropped, per reason, and how many secrets were redacted
(docs/redaction.md). Every text is sanitized again before
it is printed. --json prints the status as the service gave it.`, relay.MaxStatusDiagnostics),
	}
	asJSON := c.Flag.Bool("json", false, "print the status as JSON")
	return threadLeaf(c, func(s *cli.IO, h *client.Host, _ string, args []string) error {
		st, err := h.Status(args[0])
		if err != nil {
			return err
		}
		return watch.WriteStatus(s.Out, st, *asJSON)
	})
}

func threadListCommand() *cli.Command {
	c := &cli.Command{
		Name:  "list",
		Usage: "[--json] [--socket PATH] [--data DIR]",
		Short: "list every thread serve has opened, with its state and counts",
	}
	asJSON := c.Flag.Bool("json", false, `print {"threads":[…]} as the service gave it`)
	return threadLeaf(c, func(s *cli.IO, h *client.Host, _ string, _ []string) error {
		threads, err := h.List()
		if err != nil {
			return err
		}
		return watch.WriteList(s.Out, threads, *asJSON)
	})
}
