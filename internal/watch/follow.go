package watch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// Screen runs the full-screen view of c until q, Ctrl-C, an error, or
// the end of the connection: then it prints GoneMessage on out, once the
// terminal is restored, and returns nil. title names the session in the
// header.
func Screen(c *Conn, title string, in io.Reader, out io.Writer) error {
	m := NewModel(NewState(), c, title, nil)
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out))
	go func() {
		for ev := range c.Events() {
			p.Send(EventMsg(ev))
		}
		p.Send(ClosedMsg{})
	}()
	if _, err := p.Run(); err != nil {
		return err
	}
	if m.closed {
		// On the terminal the view left, once it is restored.
		_, err := io.WriteString(out, GoneMessage+"\n")
		return err
	}
	return nil
}

// GoneMessage is what Screen prints when it exits because the connection
// to serve ended.
const GoneMessage = "the connection to serve ended (serve stopped or restarted): watch has exited"

// ErrOutput is wrapped by Follow's error when the output failed: nobody
// reads it, so there is no one to tell.
var ErrOutput = errors.New("watch: writing the output")

// maxPending bounds the events kept while thread.list is under way; past
// it they are counted and said, as the service says its own losses.
const maxPending = 1 << 16

// Follow subscribes, prints thread.list, then every event until the
// connection ends, and returns nil then. Events that arrive before the
// list's reply are kept and printed after it, so the reader keeps reading
// meanwhile. A failed write ends it with an error that is ErrOutput.
func Follow(c *Conn, pr *Printer) error {
	if err := c.Call(wire.MethodEventsSubscribe, wire.Empty{}, nil); err != nil {
		return fmt.Errorf("events.subscribe: %w", err)
	}
	type listed struct {
		threads []wire.ThreadInfo
		err     error
	}
	done := make(chan listed, 1)
	go func() {
		var list wire.Threads
		err := c.Call(wire.MethodThreadList, wire.Empty{}, &list)
		done <- listed{list.Threads, err}
	}()
	var pending []wire.Event
	var dropped uint64
	events := c.Events()
	for waiting := true; waiting; {
		select {
		case l := <-done:
			if l.err != nil {
				return fmt.Errorf("thread.list: %w", l.err)
			}
			if err := pr.Threads(l.threads); err != nil {
				return fmt.Errorf("%w: %w", ErrOutput, err)
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
		if err := pr.Event(ev); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
	}
	if dropped > 0 {
		pr.Event(wire.Event{Kind: wire.EventLost, At: time.Now(), Count: dropped})
	}
	for ev := range c.Events() {
		if err := pr.Event(ev); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
	}
	return nil
}

// IsTerminal reports whether stdin and stdout are both a terminal, where
// Screen can draw; elsewhere a caller prints lines (Follow).
func IsTerminal(stdin io.Reader, stdout io.Writer) bool {
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	return ok1 && ok2 && term.IsTerminal(in.Fd()) && term.IsTerminal(out.Fd())
}
