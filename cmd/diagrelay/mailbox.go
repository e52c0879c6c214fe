package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

var mailboxHelp = help{
	Usage: "mailbox check [--data DIR] [--wait DURATION]",
	Short: "verify the durable mailbox: bbolt's check and every record's checksum",
	Long: `
Checks DIR/mailbox.db without changing it: bbolt's consistency check, then
every record's CRC-32C checksum and decoding. Damaged records are listed by
recipient and id; serve never serves them, and mailbox.ack removes them. A
running serve holds the file: check waits --wait for it, then gives up.`,
	Env: []string{"XDG_STATE_HOME   the default DIR is $XDG_STATE_HOME/diagrelay (else ~/.local/state/diagrelay)"},
	Exit: []string{
		"0  the mailbox is clean",
		"1  damaged, or the file could not be checked (the reason on stderr)",
		"2  usage error",
	},
}

// runMailbox runs "diagrelay mailbox check" (the only subcommand).
func runMailbox(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("mailbox check", stderr, &mailboxHelp)
	data := fs.String("data", defaultDataDir(), "`dir`ectory of the mailbox (DIR/mailbox.db)")
	wait := fs.Duration("wait", mailbox.DefaultLockTimeout, "how long to wait for a running serve to let go of the file")
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fs.Usage()
			return 0
		}
		fmt.Fprintln(stderr, "usage: diagrelay", mailboxHelp.Usage)
		return 2
	}
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagrelay mailbox check: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	path := filepath.Join(*data, mailboxFile)
	rep, err := mailbox.Check(path, mailbox.WithLockTimeout(*wait))
	switch {
	case errors.Is(err, mailbox.ErrLocked):
		fmt.Fprintf(stderr, "diagrelay mailbox check: %s is in use, most likely by a running diagrelay serve (waited %v); "+
			"stop it and check again, or wait longer with --wait\n", path, *wait)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "diagrelay mailbox check: %v\n", err)
		return 1
	}
	printReport(stdout, rep)
	if err := checkPermissions(*data); err != nil {
		fmt.Fprintf(stdout, "warning: serve will refuse this directory: %v\n", err)
	}
	if !rep.Clean() {
		return 1
	}
	return 0
}

func printReport(w io.Writer, rep *mailbox.Report) {
	fmt.Fprintf(w, "mailbox %s\n", rep.Path)
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if len(rep.Problems) == 0 {
		fmt.Fprintln(w, "bbolt consistency check: passed")
	}
	var damaged, unaddressable, unchecked, messages int
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
			shellQuote(rep.Path), shellQuote(rep.Path+".damaged"))
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

// showRecipient prints a recipient as it is if it is a thread path, else
// quoted: a damaged file can hold any bytes, and they must not reach the
// terminal as they are.
func showRecipient(name string) string {
	if relay.ValidatePath(name) == nil {
		return name
	}
	return strconv.QuoteToASCII(name)
}
