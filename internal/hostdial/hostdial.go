// Package hostdial finds serve's socket and host token as serve places
// them, for the commands that connect as the host (watch, thread), and says
// what to do when they cannot connect.
package hostdial

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path/filepath"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/internal/shellquote"
)

// Resolve returns serve's socket (socket, or where serve puts it for the
// data directory data) and the host token in data, or an error that says
// what to do; dataGiven says data was given, not the default, so the
// advice names it.
func Resolve(socket, data string, dataGiven bool) (string, string, error) {
	if socket == "" {
		socket = datadir.Socket(data)
	}
	if err := serve.CheckSocketPath(socket); err != nil {
		return "", "", err
	}
	token, err := datadir.ReadHostToken(data)
	switch {
	case errors.Is(err, fs.ErrNotExist) && listening(socket):
		// serve --host-socket off writes no host token (docs/protocol.md).
		return "", "", fmt.Errorf("the serve on %s runs with --host-socket off: its host is its stdio peer alone, and no host token exists; ask that host, or restart serve without --host-socket off", socket)
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("no host token in %s: start the service first with 'diagrelay serve'%s",
			filepath.Join(data, datadir.HostTokenFile), dataHint(data, dataGiven))
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
func dataHint(data string, given bool) string {
	if given {
		return " --data " + data
	}
	return ""
}

// Explain says what went wrong connecting to socket as the host with the
// token in data, naming the socket once, and what to do.
func Explain(socket, data string, err error) error {
	if isCode(err, client.CodeUnauthenticated) {
		return fmt.Errorf("the serve on %s does not know the host token in %s: give the --data DIR that serve was given",
			socket, filepath.Join(data, datadir.HostTokenFile))
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

// WriteRuntime prints an opened runtime for its child process (diagrelay
// thread open): the environment as one shell line to eval, or with asJSON
// the runtime and the socket. The socket is made absolute: the child may
// run in another directory.
func WriteRuntime(w io.Writer, socket string, rt client.Runtime, asJSON bool) error {
	if abs, err := filepath.Abs(socket); err == nil {
		socket = abs
	}
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			client.Runtime
			Socket string `json:"socket"`
		}{rt, socket})
	}
	_, err := fmt.Fprintf(w, "export %s=%s %s=%s\n",
		client.EnvSocket, shellquote.Quote(socket), client.EnvToken, shellquote.Quote(rt.Token))
	return err
}
