package main

import (
	"fmt"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/internal/cli"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:    "version",
		Aliases: []string{"-v", "-version", "--version"},
		Short:   "print the version and protocol (also: diagrelay -v, --version)",
		Exit:    []string{"0  printed", "2  usage error"},
		Run: func(s *cli.IO, _ []string) error {
			_, err := fmt.Fprintf(s.Out, "diagrelay %s (protocol %d)\n", capability.Version, capability.Protocol)
			return err
		},
	}
}
