// Package client is the Go side of diagrelay serve's Unix socket. A child
// process started by a manager host dials it with the token its runtime
// was opened with (Dial), and reports diagnostics to its parent:
//
//	c, err := client.Dial("", "") // DIAGRELAY_SOCKET, DIAGRELAY_TOKEN
//	if err != nil {
//		return err // not hosted: report the normal top-level way
//	}
//	defer c.Close()
//	if err := c.Report(diag.Warning, "config file not found", "lint"); err != nil {
//		return err // refused: the *Error says why
//	}
//
// A manager host dials it with the host token (DialHost) to open and
// close its children's runtimes and read their threads' status.
//
// The wire format is in docs/protocol.md; this package is the module's one
// client of it (the diagrelay report, probe and thread commands use it).
package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/sanitize"
)

// The environment a manager host gives a child process.
const (
	// EnvSocket names the service's Unix socket.
	EnvSocket = "DIAGRELAY_SOCKET"
	// EnvToken holds the token that binds the child to its runtime
	// generation.
	EnvToken = "DIAGRELAY_TOKEN"
)

// Bounds on waiting for the service: to connect, and for each reply (a
// reply waits for the report's mailbox write to be durable).
const (
	dialTimeout  = 5 * time.Second
	replyTimeout = 30 * time.Second
)

// Error is an error reply from the service. Code is the JSON-RPC error
// code (docs/protocol.md lists them: -32602 a bad report, -32001 an unknown
// token, -32003 a revoked one, -32005 the mailbox could not store it, …);
// Message says what is wrong.
type Error struct {
	Method  string
	Code    int
	Message string
}

func (e *Error) Error() string {
	if strings.HasPrefix(e.Message, e.Method+":") { // the service named it
		return fmt.Sprintf("%s (%d)", e.Message, e.Code)
	}
	return fmt.Sprintf("%s: %s (%d)", e.Method, e.Message, e.Code)
}

// ErrNotHosted is returned by Dial when the environment names no host.
var ErrNotHosted = errors.New("no manager host: " + EnvSocket + " and " + EnvToken + " must both be set")

// Child is a child's connection to the service, bound to its runtime by
// its token. Its methods are safe for concurrent use.
type Child struct {
	conn *rpc.Conn
}

// Dial connects to socket and says hello with token. An empty socket or
// token is taken from EnvSocket or EnvToken; when either is still empty
// Dial returns ErrNotHosted. An unknown or revoked token is an *Error.
func Dial(socket, token string) (*Child, error) {
	if socket == "" {
		socket = os.Getenv(EnvSocket)
	}
	if token == "" {
		token = os.Getenv(EnvToken)
	}
	if socket == "" || token == "" {
		return nil, ErrNotHosted
	}
	nc, err := net.DialTimeout("unix", socket, dialTimeout)
	if err != nil {
		return nil, err
	}
	c := &Child{conn: rpc.New(nc, nc, nc, rpc.Options{Timeout: replyTimeout})}
	if err := c.call("session.hello", struct {
		Token string `json:"token"`
	}{token}, nil); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// Probe asks the service for its capability and reports whether it is
// compatible: protocol 1 and a version at least minVersion ("" for
// capability.DiagnosticSince, the first release whose hosts carry
// diagnostics, so a newer client still accepts an older host). err is set when minVersion is not a semantic version
// or the service could not be asked; an incompatible reply is (reply, false,
// nil), with the reply as well as it could be read.
func (c *Child) Probe(minVersion string) (capability.Capability, bool, error) {
	if minVersion == "" {
		minVersion = capability.DiagnosticSince
	}
	if err := capability.CheckVersion(minVersion); err != nil {
		return capability.Capability{}, false, err
	}
	var raw json.RawMessage
	if err := c.call("diagnostic.probe", nil, &raw); err != nil {
		return capability.Capability{}, false, err
	}
	var reply any // decoded as a JSON bridge would: a map with float64 numbers
	if err := json.Unmarshal(raw, &reply); err != nil {
		return capability.Capability{}, false, fmt.Errorf("diagnostic.probe: bad reply: %w", err)
	}
	if cp, ok := capability.Compatible(reply, minVersion); ok {
		return cp, true, nil
	}
	var seen capability.Capability
	if m, ok := reply.(map[string]any); ok {
		seen.Version, _ = m["version"].(string)
		if p, ok := m["protocol"].(float64); ok && p == float64(int(p)) {
			seen.Protocol = int(p)
		}
	}
	return seen, false, nil
}

// Report sends one diagnostic and returns once the service has taken it:
// delivered, and durable in the parent's mailbox, or dropped by policy
// (duplicate, rate, cap), which the service does not reveal. The message
// and source are sanitized first (sanitize.Message, sanitize.Source), so a
// report of any length is taken, cut to the service's limits. A level
// other than diag.Info, diag.Warning or diag.Error, or a message blank once
// sanitized, is refused with an *Error of code -32602.
func (c *Child) Report(level diag.Level, message, source string) error {
	p := struct {
		Level   diag.Level `json:"level"`
		Message string     `json:"message"`
		Source  string     `json:"source,omitempty"`
	}{level, sanitize.Message(message), sanitize.Source(source)}
	return c.call("diagnostic.report", p, nil)
}

// Close closes the connection.
func (c *Child) Close() error { return c.conn.Close() }

// call makes one request, turning an error reply into an *Error.
func (c *Child) call(method string, params, result any) error {
	return call(c.conn, method, params, result)
}

// call makes one request on conn, turning an error reply into an *Error.
func call(conn *rpc.Conn, method string, params, result any) error {
	err := conn.Call(method, params, result)
	if re, ok := errors.AsType[*rpc.Error](err); ok {
		return &Error{Method: method, Code: re.Code, Message: re.Message}
	}
	return err
}
