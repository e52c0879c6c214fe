// Package datadir is serve's data directory: where it is, what it holds
// (the durable mailbox and the host token) and who may read it. It is a
// leaf: serve opens the mailbox in it (internal/serve), diagrelay mailbox
// check reports on it (internal/mailboxcheck), both by these rules.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/diagrelay/diagrelay/internal/shellquote"
)

// Files in the data directory.
const (
	MailboxFile = "mailbox.db"
	// MailboxLogFiles are the mailbox's log beside it (mailbox.LogPaths):
	// the commits since its last checkpoint (docs/mailbox.md).
	MailboxLogFile0, MailboxLogFile1 = "mailbox.log.0", "mailbox.log.1"
	HostTokenFile                    = "host.token"
)

// Default is $XDG_STATE_HOME/diagrelay, else ~/.local/state/diagrelay,
// else ./diagrelay-data.
func Default() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "diagrelay")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "diagrelay")
	}
	return "diagrelay-data"
}

// Socket is serve's default socket for the data directory dir:
// $XDG_RUNTIME_DIR/diagrelay.sock, else dir/diagrelay.sock; a directory
// only this user can use, as a socket of mode 0600 wants.
func Socket(dir string) string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "diagrelay.sock")
	}
	return filepath.Join(dir, "diagrelay.sock")
}

// CheckPermissions returns an error naming every one of the data
// directory, mailbox.db, its log files and host.token that group or
// others may access.
// A umask never causes it: serve creates them 0700 and 0600, and a umask
// only takes bits away.
func CheckPermissions(dir string) error {
	var loose []string
	check := func(path, what string, want fs.FileMode) error {
		fi, err := os.Stat(path) // a symlink is judged by what it points to
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			loose = append(loose, fmt.Sprintf("%s %s is accessible by group or others (mode %04o); fix it with: chmod %o %s",
				what, path, perm, want, shellquote.Quote(path)))
		}
		return nil
	}
	if err := check(dir, "data directory", 0o700); err != nil {
		return err
	}
	for _, name := range []string{MailboxFile, MailboxLogFile0, MailboxLogFile1, HostTokenFile} {
		if err := check(filepath.Join(dir, name), name, 0o600); err != nil {
			return err
		}
	}
	if len(loose) > 0 {
		return fmt.Errorf("refusing to use the data directory: %s", strings.Join(loose, "; "))
	}
	return nil
}
