package mailbox

import "github.com/diagrelay/diagrelay/relay"

// Both mailboxes are the relay's sinks; the assertions live in a test so
// that the package itself does not import the relay it serves.
var (
	_ relay.Mailbox     = (*Memory)(nil)
	_ relay.Mailbox     = (*Store)(nil)
	_ relay.OnceMailbox = (*Store)(nil)
)
