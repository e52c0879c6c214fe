package main

import (
	"fmt"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/cli"
)

func probeCommand() *cli.Command {
	c := help.Command("probe")
	c.Env, c.Interspersed = childEnv, true
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
