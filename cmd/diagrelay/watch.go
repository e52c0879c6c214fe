package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/watch"
)

var watchHelp = help{
	Usage: "watch [--socket PATH] [--data DIR] [--plain | --json]",
	Short: "watch a running serve live: threads, diagnostics, notifications",
	Long: `
Connects to a running serve as the host, with the token in DIR/host.token.
On a terminal it shows a full-screen view (up/down or j/k move, enter
selects, l filters levels, q or Ctrl-C quits); otherwise, or with --plain,
one readable line per event; with --json one JSON object per event (for jq).
Every text shown is sanitized again before it reaches the terminal.`,
	Env: []string{envRuntimeDir, envStateHome},
	Exit: []string{
		"0  the view was quit, or serve went away",
		"1  could not connect, or failed while watching (the reason on stderr)",
		"2  usage error",
	},
}

func runWatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("watch", stderr, &watchHelp)
	data := fs.String("data", datadir.Default(), "`dir`ectory of serve's host.token")
	socket := fs.String("socket", "", "serve's Unix socket `path` (default $XDG_RUNTIME_DIR/diagrelay.sock, else DIR/diagrelay.sock)")
	plain := fs.Bool("plain", false, "print one readable line per event instead of the full-screen view")
	asJSON := fs.Bool("json", false, "print one JSON object per event (for jq)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "diagrelay watch: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *plain && *asJSON:
		fmt.Fprintln(stderr, "diagrelay watch: give --plain or --json, not both")
		return 2
	}
	if *socket == "" {
		*socket = datadir.Socket(*data)
	}
	token, err := datadir.ReadHostToken(*data)
	if errors.Is(err, iofs.ErrNotExist) {
		fmt.Fprintf(stderr, "diagrelay watch: no host token in %s: serve is not running with --data %s, or runs with --host-socket off, which serves the host on its stdio only; restart it without --host-socket off to watch over the socket\n", *data, *data)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "diagrelay watch: reading the host token: %v\n", err)
		return 1
	}
	c, err := watch.Dial(*socket, token)
	if err != nil {
		fmt.Fprintf(stderr, "diagrelay watch: %s: %v\n", *socket, err)
		return 1
	}
	defer c.Close()
	if *plain || *asJSON || !isTerminal(stdin, stdout) {
		err = watch.Follow(c, &watch.Printer{W: stdout, JSON: *asJSON})
	} else {
		err = watch.Screen(c, *socket, stdin, stdout)
	}
	return watchExit(stderr, "diagrelay watch:", err)
}

// watchExit is the exit code of watch.Follow's or watch.Screen's error:
// 1 with the error said, or without when the output itself failed.
func watchExit(stderr io.Writer, prefix string, err error) int {
	switch {
	case err == nil:
		return 0
	case !errors.Is(err, watch.ErrOutput):
		fmt.Fprintln(stderr, prefix, err)
	}
	return 1
}

func isTerminal(stdin io.Reader, stdout io.Writer) bool {
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	return ok1 && ok2 && term.IsTerminal(in.Fd()) && term.IsTerminal(out.Fd())
}
