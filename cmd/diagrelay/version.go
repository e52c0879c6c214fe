package main

import (
	"fmt"
	"io"

	"github.com/diagrelay/diagrelay/capability"
)

var versionHelp = help{
	Usage: "version",
	Short: "print the version and protocol (also: diagrelay --version)",
	Exit:  []string{"0  printed", "2  usage error"},
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr, &versionHelp)
	operands, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(operands) > 0 {
		fmt.Fprintln(stderr, "usage: diagrelay", versionHelp.Usage)
		return 2
	}
	fmt.Fprintf(stdout, "diagrelay %s (protocol %d)\n", capability.Version, capability.Protocol)
	return 0
}
