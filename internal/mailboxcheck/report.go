// Package mailboxcheck writes diagrelay mailbox check's report for a
// person: what mailbox.Check found and what to do about it.
package mailboxcheck

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/diagrelay/diagrelay/internal/shellquote"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/threadpath"
)

// Write writes what mailbox.Check found, for a person: bbolt's
// check, each recipient's counts, the damaged ids, and a result line that
// says what serve will do with the file and what to do about it.
func Write(w io.Writer, rep *mailbox.Report) {
	fmt.Fprintf(w, "mailbox %s\n", rep.Path)
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if len(rep.Problems) == 0 {
		fmt.Fprintln(w, "bbolt consistency check: passed")
	}
	if rep.Format != "" {
		fmt.Fprintf(w, "format: %s%s\n", strconv.QuoteToASCII(rep.Format), formatNote(rep.Format))
	}
	if l := rep.Log; l != nil && (l.Posts+l.Acks > 0 || l.TornTail) {
		fmt.Fprintf(w, "log: %d posts and %d acks since the last checkpoint%s\n", l.Posts, l.Acks, logNote(l))
	}
	var damaged, unchecked, messages int
	unaddressable := rep.Unaddressable // entries naming no recipient
	if len(rep.Recipients) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "recipient\tunacknowledged\tdamaged\tunchecked\t")
		for _, r := range rep.Recipients {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", showRecipient(r.Recipient), r.Unacknowledged, r.Damaged+r.Unaddressable, r.Unchecked)
			damaged += r.Damaged
			unaddressable += r.Unaddressable
			unchecked += r.Unchecked
			messages += r.Unacknowledged
		}
		tw.Flush()
		for _, r := range rep.Recipients {
			if len(r.DamagedIDs) == 0 {
				continue
			}
			ids := make([]string, len(r.DamagedIDs))
			for i, id := range r.DamagedIDs {
				ids[i] = strconv.FormatUint(id, 10)
			}
			more := ""
			if r.Damaged > len(ids) {
				more = fmt.Sprintf(" (and %d more)", r.Damaged-len(ids))
			}
			fmt.Fprintf(w, "damaged ids for %s: %s%s\n", showRecipient(r.Recipient), strings.Join(ids, " "), more)
		}
	}
	switch {
	case len(rep.Problems) > 0:
		fmt.Fprintf(w, "result: DAMAGED: serve refuses this file. Keep it for recovery and move it aside to start a new mailbox: mv %s %s\n",
			shellquote.Quote(rep.Path), shellquote.Quote(rep.Path+".damaged"))
	case damaged+unaddressable > 0:
		fmt.Fprintf(w, "result: DAMAGED: %d damaged records, %d messages intact. serve quarantines the damaged ones: "+
			"mailbox.read lists their ids in \"damaged\" and never serves them; mailbox.ack removes them\n", damaged+unaddressable, messages)
		if unaddressable > 0 {
			fmt.Fprintf(w, "note: %d entries have no message id, so mailbox.ack cannot remove them\n", unaddressable)
		}
	default:
		fmt.Fprintf(w, "result: clean: %d messages in %d mailboxes", messages, len(rep.Recipients))
		if unchecked > 0 {
			fmt.Fprintf(w, " (%d written before checksums: unchecked)", unchecked)
		}
		fmt.Fprintln(w)
	}
}

// logNote says what serve does with what the log holds.
func logNote(l *mailbox.LogReport) string {
	note := ""
	if l.Posts+l.Acks > 0 {
		note = " (counted above; serve writes them into the file when it starts)"
	}
	if l.TornTail {
		note += "; it ends in a commit a crash cut short, which no one was answered for: serve drops it"
	}
	return note
}

// formatNote says what serve does with a file of format tag.
func formatNote(tag string) string {
	switch tag {
	case "diagrelay-mailbox/1", "diagrelay-mailbox/2":
		return " (an older edition: serve migrates it in place when it starts; docs/mailbox.md)"
	case "diagrelay-mailbox/3":
		return ""
	case "diagrelay-mailbox/3+log":
		return " (a serve has it open, or stopped without closing it: its log may hold what the file does not yet; docs/mailbox.md)"
	}
	return " (not a format this diagrelay reads)"
}

// showRecipient prints a recipient as it is if it is a thread path, else
// quoted: a damaged file can hold any bytes, and they must not reach the
// terminal as they are.
func showRecipient(name string) string {
	if threadpath.Validate(name) == nil {
		return name
	}
	return strconv.QuoteToASCII(name)
}
