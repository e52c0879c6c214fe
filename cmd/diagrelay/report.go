package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/cli"
)

// maxStdinMessage bounds what report reads from stdin: far more than
// sanitize.Message keeps.
const maxStdinMessage = 4 << 20

// levels are the levels a report takes, as --level takes them.
var levels = []string{string(diag.Info), string(diag.Warning), string(diag.Error)}

func reportCommand() *cli.Command {
	c := help.Command("report")
	c.Env, c.Interspersed = childEnv, true
	c.ArgName, c.MinArgs, c.MaxArgs = "MESSAGE (or - to read it from stdin)", 1, -1
	level := cli.Choice(&c.Flag, "level", "", "the diagnostic's level (required)", levels...)
	source := c.Flag.String("source", "", "short name of the reporting extension")
	c.Run = func(s *cli.IO, words []string) error {
		if *level == "" {
			return cli.Usagef("--level is required: give --level %s", cli.OneOf(levels))
		}
		message := strings.Join(words, " ")
		if len(words) == 1 && words[0] == "-" {
			b, err := io.ReadAll(io.LimitReader(s.In, maxStdinMessage))
			if err != nil {
				return fmt.Errorf("reading the message from stdin: %w", err)
			}
			message = string(b)
		}
		ch, err := client.Dial("", "")
		if err != nil {
			return err
		}
		defer ch.Close()
		return ch.Report(diag.Level(*level), message, *source)
	}
	return c
}
