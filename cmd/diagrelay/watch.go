package main

import (
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/watch"
)

func watchCommand() *cli.Command {
	c := &cli.Command{
		Name:  "watch",
		Usage: "[--socket PATH] [--data DIR] [--plain | --json]",
		Short: "watch a running serve live: threads, diagnostics, notifications",
		Long: `
Connects to a running serve as the host, with the token in DIR/host.token.
On a terminal it shows a full-screen view (up/down or j/k move, enter
selects, l filters levels, q or Ctrl-C quits); otherwise, or with --plain,
one readable line per event; with --json one JSON object per event (for jq).
Every text shown is sanitized again before it reaches the terminal.`,
		Env: []string{envRuntimeDir, envStateHome},
		Exit: []string{
			"0  the view was quit, or serve went away",
			"1  could not connect, or failed while watching (the reason on stderr)",
			"2  usage error",
		},
	}
	var h hostFlags
	h.define(c)
	plain := c.Flag.Bool("plain", false, "print one readable line per event instead of the full-screen view")
	asJSON := c.Flag.Bool("json", false, "print one JSON object per event (for jq)")
	c.Run = func(s *cli.IO, _ []string) error {
		if *plain && *asJSON {
			return cli.Usagef("give --plain or --json, not both")
		}
		socket, token, err := h.resolve()
		if err != nil {
			return err
		}
		wc, err := watch.Dial(socket, token)
		if err != nil {
			return h.dialError(socket, err)
		}
		defer wc.Close()
		if *plain || *asJSON || !watch.IsTerminal(s.In, s.Out) {
			err = watch.Follow(wc, &watch.Printer{W: s.Out, JSON: *asJSON})
		} else {
			err = watch.Screen(wc, socket, s.In, s.Out)
		}
		return watchError(err)
	}
	return c
}

// watchError is the error of watch.Follow's or watch.Screen's: an output
// failure ends with 1 and nothing said (there is nowhere to say it).
func watchError(err error) error {
	switch {
	case errors.Is(err, watch.ErrOutput):
		return &cli.ExitError{Code: 1}
	case errors.Is(err, tea.ErrInterrupted): // SIGINT: ended as asked
		return &cli.ExitError{Code: 130}
	}
	return err
}
