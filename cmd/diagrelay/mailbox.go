package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/mailboxcheck"
	"github.com/diagrelay/diagrelay/mailbox"
)

func mailboxCommand() *cli.Command {
	return &cli.Command{
		Name:     "mailbox",
		Usage:    "<command>",
		Short:    "inspect serve's durable mailbox",
		Long:     "Inspects serve's durable mailbox, DIR/mailbox.db.",
		Commands: []*cli.Command{mailboxCheckCommand()},
	}
}

func mailboxCheckCommand() *cli.Command {
	c := &cli.Command{
		Name:  "check",
		Usage: "[--data DIR] [--wait DURATION]",
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
	data := c.Flag.String("data", datadir.Default(), "`dir`ectory of the mailbox (DIR/mailbox.db)")
	wait := c.Flag.Duration("wait", mailbox.DefaultLockTimeout, "how long to wait for a running serve to let go of the file")
	c.Run = func(s *cli.IO, _ []string) error {
		path := filepath.Join(*data, datadir.MailboxFile)
		rep, err := mailbox.Check(path, mailbox.WithLockTimeout(*wait))
		switch {
		case errors.Is(err, mailbox.ErrLocked):
			return fmt.Errorf("%s is in use, most likely by a running diagrelay serve (waited %v); "+
				"stop it and check again, or wait longer with --wait", path, *wait)
		case err != nil:
			return err
		}
		mailboxcheck.Write(s.Out, rep)
		if err := datadir.CheckPermissions(*data); err != nil {
			fmt.Fprintf(s.Out, "warning: serve will refuse this directory: %v\n", err)
		}
		if !rep.Clean() {
			return &cli.ExitError{Code: 1}
		}
		return nil
	}
	return c
}
