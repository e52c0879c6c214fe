package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/diagrelay/diagrelay/internal/demo"
	"github.com/diagrelay/diagrelay/relay"
)

func init() {
	commands["demo"] = command{
		summary: "show what a parent session sees from well-behaved, noisy and hostile children",
		run:     runDemo,
	}
}

// runDemo: exit 0 after printing the transcript, 1 if the scenario or the
// output failed, 2 on a usage error.
func runDemo(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the transcript as one JSON document instead of text")
	mode := fs.String("mode", string(relay.ModeRPC), "the parent session's `mode`: tui, rpc or print")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: diagrelay demo [--json] [--mode tui|rpc|print]")
		fmt.Fprintln(stderr, "Runs a session tree with well-behaved, noisy and hostile child extensions")
		fmt.Fprintln(stderr, "on a simulated clock and prints what the parent session sees.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagrelay demo: unexpected argument %s\n", strconv.QuoteToASCII(fs.Arg(0)))
		fs.Usage()
		return 2
	}
	m, err := relay.ParseMode(*mode)
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo:", err)
		fs.Usage()
		return 2
	}

	tr, err := demo.Run(m)
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo:", err)
		return 1
	}
	w := bufio.NewWriter(stdout)
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(tr)
	} else {
		demo.Render(w, tr)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo: writing the transcript:", err)
		return 1
	}
	return 0
}
