// Package datadir is serve's data directory: where it is, what it holds
// (the durable mailbox and the host token), who may read it, and whether
// its mailbox can be trusted. diagrelay serve opens it; diagrelay mailbox
// check reports on it by the same rules.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/diagrelay/diagrelay/internal/shellquote"
	"github.com/diagrelay/diagrelay/mailbox"
)

// Files in the data directory.
const (
	MailboxFile   = "mailbox.db"
	HostTokenFile = "host.token"
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

// Open prepares serve's data directory and opens its mailbox. It creates
// the directory (mode 0700) if it is missing; it refuses a directory,
// mailbox.db or host.token that group or others can access, as ssh refuses
// a key file, naming each file and the chmod that fixes it; and it refuses
// a mailbox.db that cannot be trusted, leaving it as it is and saying what
// to do; and it says so when another serve holds the mailbox. Only a
// missing mailbox.db starts a new mailbox.
func Open(dir string) (*mailbox.Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := CheckPermissions(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, MailboxFile)
	store, err := mailbox.Open(path)
	switch {
	case errors.Is(err, mailbox.ErrCorrupt):
		return nil, untrustedMailbox(dir, path, err)
	case errors.Is(err, mailbox.ErrLocked):
		return nil, fmt.Errorf("another diagrelay serve holds the data directory %s (its %s is locked): "+
			"stop that serve, or give this one another --data DIR", dir, MailboxFile)
	}
	return store, err
}

// CheckPermissions returns an error naming every one of the data
// directory, mailbox.db and host.token that group or others may access.
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
	for _, name := range []string{MailboxFile, HostTokenFile} {
		if err := check(filepath.Join(dir, name), name, 0o600); err != nil {
			return err
		}
	}
	if len(loose) > 0 {
		return fmt.Errorf("refusing to use the data directory: %s", strings.Join(loose, "; "))
	}
	return nil
}

// untrustedMailbox is Open's error for a mailbox.db that mailbox.Open
// refused.
func untrustedMailbox(dir, path string, err error) error {
	reason := strings.TrimPrefix(err.Error(), "mailbox: "+path+": ")
	reason = strings.ReplaceAll(reason, mailbox.ErrCorrupt.Error()+": ", "")
	return fmt.Errorf("mailbox %s cannot be trusted: %s. It was left as it is, and serve does not start on it. "+
		"See what it holds with: diagrelay mailbox check --data %s; then move it aside to start a new, empty mailbox: mv %s %s",
		path, reason, shellquote.Quote(dir), shellquote.Quote(path), shellquote.Quote(path+".damaged"))
}
