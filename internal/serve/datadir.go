package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/shellquote"
	"github.com/diagrelay/diagrelay/mailbox"
)

// openData prepares serve's data directory and opens its mailbox. It creates
// the directory (mode 0700) if it is missing; it refuses a directory,
// mailbox.db or host.token that group or others can access, as ssh refuses
// a key file, naming each file and the chmod that fixes it; and it refuses
// a mailbox.db that cannot be trusted, leaving it as it is and saying what
// to do; and it says so when another serve holds the mailbox. Only a
// missing mailbox.db starts a new mailbox.
func openData(dir string) (*mailbox.Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := datadir.CheckPermissions(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, datadir.MailboxFile)
	store, err := mailbox.Open(path)
	switch {
	case errors.Is(err, mailbox.ErrCorrupt):
		return nil, untrustedMailbox(dir, path, err)
	case errors.Is(err, mailbox.ErrLocked):
		return nil, fmt.Errorf("another diagrelay serve holds the data directory %s (its %s is locked): "+
			"stop that serve, or give this one another --data DIR", dir, datadir.MailboxFile)
	}
	return store, err
}

// untrustedMailbox is openData's error for a mailbox.db that mailbox.Open
// refused.
func untrustedMailbox(dir, path string, err error) error {
	reason := strings.TrimPrefix(err.Error(), "mailbox: "+path+": ")
	reason = strings.ReplaceAll(reason, mailbox.ErrCorrupt.Error()+": ", "")
	return fmt.Errorf("mailbox %s cannot be trusted: %s. It was left as it is, and serve does not start on it. "+
		"See what it holds with: diagrelay mailbox check --data %s; then move it aside to start a new, empty mailbox: mv %s %s",
		path, reason, shellquote.Quote(dir), shellquote.Quote(path), shellquote.Quote(path+".damaged"))
}
