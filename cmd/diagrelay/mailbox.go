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
	c := help.Command("mailbox")
	c.Commands = []*cli.Command{mailboxCheckCommand()}
	return c
}

func mailboxCheckCommand() *cli.Command {
	c := help.Command("mailbox check")
	c.Env = []string{envStateHome}
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
