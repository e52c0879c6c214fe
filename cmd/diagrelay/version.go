package main

import (
	"fmt"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/internal/cli"
)

func versionCommand() *cli.Command {
	c := help.Command("version")
	c.Aliases = []string{"-v", "-version", "--version"}
	c.Run = func(s *cli.IO, _ []string) error {
		_, err := fmt.Fprintf(s.Out, "diagrelay %s (protocol %d)\n", capability.Version, capability.Protocol)
		return err
	}
	return c
}
