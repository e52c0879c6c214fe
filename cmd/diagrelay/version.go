package main

import (
	"fmt"
	"io"

	"github.com/diagrelay/diagrelay/capability"
)

func init() {
	commands["version"] = command{summary: "print the version and protocol", run: runVersion}
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: diagrelay version")
		return 2
	}
	fmt.Fprintf(stdout, "diagrelay %s (protocol %d)\n", capability.Version, capability.Protocol)
	return 0
}
