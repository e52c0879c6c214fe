package main

import (
	"fmt"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/cli"
)

func probeCommand() *cli.Command {
	c := &cli.Command{
		Name:  "probe",
		Usage: "[--min VERSION]",
		Short: "exit 0 if a compatible manager host is live for this child",
		Long: `
Asks the manager host that started this child for its capability. It is
compatible when it speaks protocol 1 with a version of at least --min
(semantic-version order); then probe prints it as JSON on stdout.`,
		Env: childEnv,
		Exit: []string{
			"0  hosted: a compatible host answered (its capability is on stdout)",
			"1  not hosted: no environment, no answer, or an incompatible host (why, on stderr)",
			"2  usage error",
		},
		Interspersed: true,
	}
	min := cli.Checked(&c.Flag, "min", capability.Version, "the minimum compatible `version`", capability.CheckVersion)
	c.Run = func(s *cli.IO, _ []string) error {
		ch, err := client.Dial("", "")
		if err != nil {
			return fmt.Errorf("not hosted: %w", err)
		}
		defer ch.Close()
		cp, ok, err := ch.Probe(*min)
		switch {
		case err != nil:
			return fmt.Errorf("not hosted: %w", err)
		case !ok:
			return fmt.Errorf("not hosted: incompatible reply (version %q, protocol %d; want protocol %d, version >= %s)",
				cp.Version, cp.Protocol, capability.Protocol, *min)
		}
		fmt.Fprintf(s.Out, "{\"version\":%q,\"protocol\":%d}\n", cp.Version, cp.Protocol)
		return nil
	}
	return c
}
