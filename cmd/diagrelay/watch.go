package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
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
	tokenFile := filepath.Join(*data, datadir.HostTokenFile)
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "diagrelay watch: reading the host token: %v\n", err)
		return 1
	}
	c, err := watch.Dial(*socket, string(token))
	if err != nil {
		fmt.Fprintf(stderr, "diagrelay watch: %s: %v\n", *socket, err)
		return 1
	}
	defer c.Close()
	if *plain || *asJSON || !isTerminal(stdin, stdout) {
		return printEvents(c, &watch.Printer{W: stdout, JSON: *asJSON}, stderr)
	}
	return watchScreen(c, *socket, stdin, stdout, stderr)
}

func isTerminal(stdin io.Reader, stdout io.Writer) bool {
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	return ok1 && ok2 && term.IsTerminal(in.Fd()) && term.IsTerminal(out.Fd())
}

// watchScreen runs the full-screen view until q, Ctrl-C or an error.
func watchScreen(c *watch.Conn, title string, stdin io.Reader, stdout, stderr io.Writer) int {
	m := watch.NewModel(watch.NewState(), c, title, nil)
	p := tea.NewProgram(m, tea.WithInput(stdin), tea.WithOutput(stdout))
	go func() {
		for ev := range c.Events() {
			p.Send(watch.EventMsg(ev))
		}
		p.Send(watch.ClosedMsg{})
	}()
	if _, err := p.Run(); err != nil {
		fmt.Fprintln(stderr, "diagrelay watch:", err)
		return 1
	}
	return 0
}

// maxPending bounds the events kept while thread.list is under way; past
// it they are counted and said, as the service says its own losses.
const maxPending = 1 << 16

// printEvents subscribes, prints thread.list, then every event until the
// connection ends. Events that arrive before the list's reply are kept and
// printed after it, so the reader keeps reading meanwhile.
func printEvents(c *watch.Conn, pr *watch.Printer, stderr io.Writer) int {
	if err := c.Call("events.subscribe", struct{}{}, nil); err != nil {
		fmt.Fprintln(stderr, "diagrelay watch: events.subscribe:", err)
		return 1
	}
	type listed struct {
		threads []watch.ThreadInfo
		err     error
	}
	done := make(chan listed, 1)
	go func() {
		var list struct {
			Threads []watch.ThreadInfo `json:"threads"`
		}
		err := c.Call("thread.list", struct{}{}, &list)
		done <- listed{list.Threads, err}
	}()
	var pending []watch.Event
	var dropped uint64
	events := c.Events()
	for waiting := true; waiting; {
		select {
		case l := <-done:
			if l.err != nil {
				fmt.Fprintln(stderr, "diagrelay watch: thread.list:", l.err)
				return 1
			}
			if err := pr.Threads(l.threads); err != nil {
				return 1
			}
			waiting = false
		case ev, ok := <-events:
			if !ok {
				events = nil // the list call fails next
				continue
			}
			if len(pending) < maxPending {
				pending = append(pending, ev)
			} else {
				dropped++
			}
		}
	}
	for _, ev := range pending {
		if pr.Event(ev) != nil {
			return 1
		}
	}
	if dropped > 0 {
		pr.Event(watch.Event{Kind: "lost", At: time.Now(), Count: dropped})
	}
	for ev := range c.Events() {
		if pr.Event(ev) != nil {
			return 1 // stdout closed: nobody is reading
		}
	}
	return 0
}
