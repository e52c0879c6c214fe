package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/serve"
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

// resolve returns the socket and the host token, or an error that says
// what to do.
func (h *hostFlags) resolve() (socket, token string, err error) {
	socket = *h.socket
	if socket == "" {
		socket = datadir.Socket(*h.data)
	}
	if err := serve.CheckSocketPath(socket); err != nil {
		return "", "", err
	}
	token, err = datadir.ReadHostToken(*h.data)
	switch {
	case errors.Is(err, fs.ErrNotExist) && listening(socket):
		// serve --host-socket off writes no host token (docs/protocol.md).
		return "", "", fmt.Errorf("the serve on %s runs with --host-socket off: its host is its stdio peer alone, and no host token exists; ask that host, or restart serve without --host-socket off", socket)
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("no host token in %s: start the service first with 'diagrelay serve'%s",
			filepath.Join(*h.data, datadir.HostTokenFile), h.dataHint())
	case err != nil:
		return "", "", fmt.Errorf("reading the host token: %w", err)
	}
	return socket, token, nil
}

// listening reports whether something accepts connections on socket.
func listening(socket string) bool {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// dataHint names the --data to give when it was not the default.
func (h *hostFlags) dataHint() string {
	if h.c.FlagGiven("data") {
		return " --data " + *h.data
	}
	return ""
}

// dialError says what went wrong connecting to socket, naming it once,
// and what to do.
func (h *hostFlags) dialError(socket string, err error) error {
	if isCode(err, client.CodeUnauthenticated) {
		return fmt.Errorf("the serve on %s does not know the host token in %s: give the --data DIR that serve was given",
			socket, filepath.Join(*h.data, datadir.HostTokenFile))
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		reason := op.Err.Error()
		if errors.Is(op.Err, syscall.ENOENT) || errors.Is(op.Err, syscall.ECONNREFUSED) {
			return fmt.Errorf("no serve is listening on %s (%s): start one with 'diagrelay serve', or give the --socket it serves", socket, reason)
		}
		return fmt.Errorf("%s: %s", socket, reason)
	}
	return fmt.Errorf("%s: %w", socket, err)
}

// isCode reports whether err is a JSON-RPC error reply with code.
func isCode(err error, code int) bool {
	e, ok := errors.AsType[*client.Error](err)
	return ok && e.Code == code
}
