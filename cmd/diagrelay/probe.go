package main

import (
	"fmt"
	"io"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/client"
)

var probeHelp = help{
	Usage: "probe [--min VERSION]",
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
}

func runProbe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("probe", stderr, &probeHelp)
	min := fs.String("min", capability.Version, "the minimum compatible `version`")
	operands, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(operands) > 0 {
		fmt.Fprintln(stderr, "usage: diagrelay", probeHelp.Usage)
		return 2
	}
	if err := capability.CheckVersion(*min); err != nil {
		fmt.Fprintf(stderr, "diagrelay probe: --min: %v\n", err)
		return 2
	}
	c, err := client.Dial("", "")
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay probe: not hosted:", err)
		return 1
	}
	defer c.Close()
	cp, ok, err := c.Probe(*min)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "diagrelay probe: not hosted:", err)
		return 1
	case !ok:
		fmt.Fprintf(stderr, "diagrelay probe: not hosted: incompatible reply (version %q, protocol %d; want protocol %d, version >= %s)\n",
			cp.Version, cp.Protocol, capability.Protocol, *min)
		return 1
	}
	fmt.Fprintf(stdout, "{\"version\":%q,\"protocol\":%d}\n", cp.Version, cp.Protocol)
	return 0
}
