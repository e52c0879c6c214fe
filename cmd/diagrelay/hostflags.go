package main

import (
	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/hostdial"
)

// socketDefault says where serve's socket is when --socket is not given.
const socketDefault = "default $XDG_RUNTIME_DIR/diagrelay.sock, else DIR/diagrelay.sock"

// hostFlags are the flags of the commands that connect to serve as the
// host (watch, thread): serve's socket and the data directory that holds
// its host token, found as serve finds them.
type hostFlags struct {
	socket, data *string
	c            *cli.Command
}

func (h *hostFlags) define(c *cli.Command) {
	h.c = c
	h.data = c.Flag.String("data", datadir.Default(), "serve's data `dir`ectory, which holds host.token")
	h.socket = c.Flag.String("socket", "", "serve's Unix socket `path` ("+socketDefault+")")
}

// resolve returns the socket and the host token (hostdial.Resolve).
func (h *hostFlags) resolve() (socket, token string, err error) {
	return hostdial.Resolve(*h.socket, *h.data, h.c.FlagGiven("data"))
}

// dialError says what went wrong connecting to socket, and what to do.
func (h *hostFlags) dialError(socket string, err error) error {
	return hostdial.Explain(socket, *h.data, err)
}
