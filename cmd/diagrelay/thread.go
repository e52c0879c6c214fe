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
	c := help.Command("thread")
	c.Commands = []*cli.Command{threadOpenCommand(), threadCloseCommand(), threadStatusCommand(), threadListCommand()}
	return c
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
		h, socket, err := hostDial(&hf, client.DialHost)
		if err != nil {
			return err
		}
		defer h.Close()
		return run(s, h, socket, args)
	}
	return c
}

func threadOpenCommand() *cli.Command {
	c := help.Command("thread open")
	c.ArgName = "PATH (the thread, such as /root/build)"
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
	c := help.Command("thread close")
	c.ArgName = "PATH"
	return threadLeaf(c, func(_ *cli.IO, h *client.Host, _ string, args []string) error {
		return h.CloseRuntime(args[0])
	})
}

func threadStatusCommand() *cli.Command {
	c := help.Command("thread status")
	c.ArgName = "PATH"
	c.Long = fmt.Sprintf(c.Long, relay.MaxStatusDiagnostics)
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
	c := help.Command("thread list")
	asJSON := c.Flag.Bool("json", false, `print {"threads":[…]} as the service gave it`)
	return threadLeaf(c, func(s *cli.IO, h *client.Host, _ string, _ []string) error {
		threads, err := h.List()
		if err != nil {
			return err
		}
		return watch.WriteList(s.Out, threads, *asJSON)
	})
}
