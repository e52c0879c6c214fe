package client_test

import (
	"errors"
	"log"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/diag"
)

// A child process reports to its parent when a manager host started it,
// and falls back to its own reporting otherwise.
func Example() {
	c, err := client.Dial("", "") // DIAGRELAY_SOCKET, DIAGRELAY_TOKEN
	if errors.Is(err, client.ErrNotHosted) {
		log.Print("warning: config file not found") // a top-level session
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	err = c.Report(diag.Warning, "config file not found", "lint")
	if e, ok := errors.AsType[*client.Error](err); ok && e.Code == client.CodeRevoked {
		return // the runtime was reopened or closed: this child is done
	}
	if err != nil {
		log.Print(err)
	}
}
