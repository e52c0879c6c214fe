package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
)

var reportHelp = help{
	Usage: "report --level info|warning|error [--source S] MESSAGE... | -",
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
}

// maxStdinMessage bounds what report reads from stdin: far more than
// sanitize.Message keeps.
const maxStdinMessage = 4 << 20

func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", stderr, &reportHelp)
	level := fs.String("level", "", "info, warning or error (required)")
	source := fs.String("source", "", "short name of the reporting extension")
	words, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if *level == "" || len(words) == 0 {
		fs.Usage()
		return 2
	}
	message := strings.Join(words, " ")
	if len(words) == 1 && words[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, maxStdinMessage))
		if err != nil {
			fmt.Fprintln(stderr, "diagrelay report: reading the message from stdin:", err)
			return 1
		}
		message = string(b)
	}
	c, err := client.Dial("", "")
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay report:", err)
		return 1
	}
	defer c.Close()
	if err := c.Report(diag.Level(*level), message, *source); err != nil {
		fmt.Fprintln(stderr, "diagrelay report:", err)
		return 1
	}
	return 0
}
