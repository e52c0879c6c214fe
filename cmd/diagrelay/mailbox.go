package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/mailbox"
)

var mailboxHelp = help{
	Usage: "mailbox check [--data DIR] [--wait DURATION]",
	Short: "verify the durable mailbox: bbolt's check and every record's checksum",
	Long: `
Checks DIR/mailbox.db without changing it: bbolt's consistency check, then
every record's CRC-32C checksum and decoding. Damaged records are listed by
recipient and id; serve never serves them, and mailbox.ack removes them. A
running serve holds the file: check waits --wait for it, then gives up.`,
	Env: []string{envStateHome},
	Exit: []string{
		"0  the mailbox is clean",
		"1  damaged, or the file could not be checked (the reason on stderr)",
		"2  usage error",
	},
}

// runMailbox runs "diagrelay mailbox check" (the only subcommand).
func runMailbox(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("mailbox check", stderr, &mailboxHelp)
	data := fs.String("data", datadir.Default(), "`dir`ectory of the mailbox (DIR/mailbox.db)")
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
	path := filepath.Join(*data, datadir.MailboxFile)
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
	datadir.WriteReport(stdout, rep)
	if err := datadir.CheckPermissions(*data); err != nil {
		fmt.Fprintf(stdout, "warning: serve will refuse this directory: %v\n", err)
	}
	if !rep.Clean() {
		return 1
	}
	return 0
}
