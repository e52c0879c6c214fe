package main

import (
	"fmt"

	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/demo"
	"github.com/diagrelay/diagrelay/internal/livedemo"
	"github.com/diagrelay/diagrelay/internal/watch"
	"github.com/diagrelay/diagrelay/relay"
)

func demoCommand() *cli.Command {
	c := help.Command("demo")
	asJSON := c.Flag.Bool("json", false, "print the transcript as one JSON document instead of text")
	mode := cli.Choice(&c.Flag, "mode", string(relay.ModeRPC), "the parent session's mode", modes...)
	live := c.Flag.Bool("watch", false, "run the session tree on the real clock through an embedded serve and watch it live")
	c.Run = func(s *cli.IO, _ []string) error {
		if *live {
			return watchError(livedemo.Run(livedemo.Options{In: s.In, Out: s.Out, TUI: watch.IsTerminal(s.In, s.Out)}))
		}
		tr, err := demo.Run(relay.Mode(*mode))
		if err != nil {
			return err
		}
		if *asJSON {
			err = demo.WriteJSON(s.Out, tr)
		} else {
			err = demo.WriteText(s.Out, tr)
		}
		if err != nil {
			return fmt.Errorf("writing the transcript: %w", err)
		}
		return nil
	}
	return c
}
