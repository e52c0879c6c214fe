package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/diagrelay/diagrelay/internal/demo"
	"github.com/diagrelay/diagrelay/internal/livedemo"
	"github.com/diagrelay/diagrelay/relay"
)

var demoHelp = help{
	Usage: "demo [--json] [--mode tui|rpc|print] [--watch]",
	Short: "show what a parent session sees from well-behaved, noisy and hostile children",
	Long: `
Runs a session tree with well-behaved, noisy and hostile child extensions
on a simulated clock and prints what the parent session sees: the
notifications (and which ones the host-wide limit held back), the parent
messages and each thread's status. --json prints the same as data.
--watch runs the same children on the real clock through an embedded serve
and shows them live in the watch view (q quits).`,
	Exit: []string{"0  printed", "1  the scenario or the output failed", "2  usage error"},
}

// runDemo: exit 0 after printing the transcript, 1 if the scenario or the
// output failed, 2 on a usage error.
func runDemo(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr, &demoHelp)
	asJSON := fs.Bool("json", false, "print the transcript as one JSON document instead of text")
	mode := fs.String("mode", string(relay.ModeRPC), "the parent session's `mode`: tui, rpc or print")
	live := fs.Bool("watch", false, "run the session tree on the real clock through an embedded serve and watch it live")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagrelay demo: unexpected argument %s\n", strconv.QuoteToASCII(fs.Arg(0)))
		fs.Usage()
		return 2
	}
	if *live {
		err := livedemo.Run(livedemo.Options{In: stdin, Out: stdout, TUI: isTerminal(stdin, stdout)})
		return watchExit(stderr, "diagrelay demo:", err)
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
	if *asJSON {
		err = demo.WriteJSON(stdout, tr)
	} else {
		err = demo.WriteText(stdout, tr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "diagrelay demo: writing the transcript:", err)
		return 1
	}
	return 0
}
