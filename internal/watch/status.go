package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/diagrelay/diagrelay/internal/frame"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

// state names a runtime's state.
func state(open bool) string {
	if open {
		return "open"
	}
	return "closed"
}

// WriteStatus prints a thread.status result (diagrelay thread status):
// with asJSON as the service gave it, else for a terminal, where every
// text from the service is cleaned again, as the live view's are, whatever
// the service did, and a source is framed as a notification frames it
// (internal/frame).
func WriteStatus(w io.Writer, st wire.Status, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(st)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "thread\t%s\n", clean(st.Path))
	fmt.Fprintf(tw, "runtime\t%s, generation %d\n", state(st.Open), st.Generation)
	if st.Parent != "" {
		fmt.Fprintf(tw, "parent\t%s\n", clean(st.Parent))
	}
	if st.Owner != "" {
		fmt.Fprintf(tw, "owner\t%s\n", clean(st.Owner))
	}
	if st.Edge != "" {
		fmt.Fprintf(tw, "edge\t%s\n", sanitize.Source(st.Edge))
	}
	d := st.Dropped
	fmt.Fprintf(tw, "dropped\t%d duplicate, %d rate, %d cap, %d invalid\n", d.Duplicate, d.Rate, d.Cap, d.Invalid)
	fmt.Fprintf(tw, "redacted\t%d\n", st.Redacted.Total())
	fmt.Fprintf(tw, "diagnostics\t%d\n", len(st.Diagnostics))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, dg := range st.Diagnostics {
		dg = cleanDiag(dg)
		src := ""
		if s := frame.Source(dg.Source); s != "" {
			src = " [" + s + "]"
		}
		fmt.Fprintf(w, "  %s %-7s%s %s\n", dg.At.UTC().Format(time.RFC3339), dg.Level, src, dg.Message)
	}
	return nil
}

// WriteList prints thread.list's threads (diagrelay thread list): with
// asJSON as {"threads":[…]}, else one line each.
func WriteList(w io.Writer, threads []wire.ThreadInfo, asJSON bool) error {
	if asJSON {
		if threads == nil {
			threads = []wire.ThreadInfo{}
		}
		return json.NewEncoder(w).Encode(wire.Threads{Threads: threads})
	}
	if len(threads) == 0 {
		_, err := fmt.Fprintln(w, "no threads yet: open one with 'diagrelay thread open PATH'")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tRUNTIME\tGENERATION\tDIAGNOSTICS\tDROPPED")
	for _, t := range threads {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", clean(t.Path), state(t.Open), t.Generation, t.Diagnostics, t.Dropped.Total())
	}
	return tw.Flush()
}
