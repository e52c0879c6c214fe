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

// hostDial finds serve's socket and host token as h's flags say and
// connects with dial (client.DialHost, watch.Dial); a failure to connect
// says what went wrong and what to do (hostdial.Explain).
func hostDial[T any](h *hostFlags, dial func(socket, token string) (T, error)) (conn T, socket string, err error) {
	socket, token, err := hostdial.Resolve(*h.socket, *h.data, h.c.FlagGiven("data"))
	if err != nil {
		return conn, "", err
	}
	conn, err = dial(socket, token)
	if err != nil {
		return conn, "", hostdial.Explain(socket, *h.data, err)
	}
	return conn, socket, nil
}
