package main

import (
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/watch"
)

func watchCommand() *cli.Command {
	c := help.Command("watch")
	c.Env = []string{envRuntimeDir, envStateHome}
	var h hostFlags
	h.define(c)
	plain := c.Flag.Bool("plain", false, "print one readable line per event instead of the full-screen view")
	asJSON := c.Flag.Bool("json", false, "print one JSON object per event (for jq)")
	c.Run = func(s *cli.IO, _ []string) error {
		if *plain && *asJSON {
			return cli.Usagef("give --plain or --json, not both")
		}
		wc, socket, err := hostDial(&h, watch.Dial)
		if err != nil {
			return err
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
