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
	c := &cli.Command{
		Name:  "report",
		Usage: "--level info|warning|error [--source S] MESSAGE... | -",
		Short: "report a diagnostic from a child process to its parent session",
		Long: `
Sends one diagnostic to the manager host that started this child, through
package client. The words of MESSAGE are joined with spaces; "-" alone reads
the message from stdin (its first 4 MiB). Flags may follow the message; "--"
ends them. Message and source are sanitized first and cut to 1000 and 80
UTF-16 code units, so a message of any length is taken.`,
		Env: childEnv,
		Exit: []string{
			"0  the service took the report: delivered, or dropped by policy (duplicate,",
			"   rate, cap), which it does not reveal",
			"1  no manager host (the environment is not set, or the socket does not answer),",
			"   or the service refused the report (the JSON-RPC error and its code are printed)",
			"2  usage error",
		},
		Interspersed: true,
		ArgName:      "MESSAGE (or - to read it from stdin)",
		MinArgs:      1,
		MaxArgs:      -1,
	}
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
