package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
)

func init() {
	commands["report"] = command{summary: "report a diagnostic from a child (DIAGRELAY_SOCKET, DIAGRELAY_TOKEN)", run: runReport}
	commands["probe"] = command{summary: "exit 0 if a compatible manager host is live for this child", run: runProbe}
}

// runReport: exit 0 when the service took the report (delivered or dropped
// by policy, which it does not reveal), 1 when there is no host or the
// service refused it, 2 on a usage error.
func runReport(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("level", "", "info, warning or error (required)")
	source := fs.String("source", "", "short name of the reporting extension")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: diagrelay report --level info|warning|error [--source S] MESSAGE...")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *level == "" || fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	c, err := client.Dial("", "")
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay report:", err)
		return 1
	}
	defer c.Close()
	if err := c.Report(diag.Level(*level), strings.Join(fs.Args(), " "), *source); err != nil {
		fmt.Fprintln(stderr, "diagrelay report:", err)
		return 1
	}
	return 0
}

// runProbe: exit 0 and print the capability when a live host answers with
// protocol 1 and a version >= --min; 1 when not hosted (the reason on
// stderr); 2 on a usage error.
func runProbe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	min := fs.String("min", capability.Version, "the minimum compatible `version`")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: diagrelay probe [--min VERSION]")
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
		fmt.Fprintf(stderr, "diagrelay probe: not hosted: incompatible reply (version %q, protocol %d; want protocol %d, version >= %s)\n", cp.Version, cp.Protocol, capability.Protocol, *min)
		return 1
	}
	fmt.Fprintf(stdout, "{\"version\":%q,\"protocol\":%d}\n", cp.Version, cp.Protocol)
	return 0
}
