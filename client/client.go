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
	"os"
	"strings"
	"time"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/wire"
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

// Error is an error reply from the service, the protocol's error object:
// Code is the JSON-RPC error code (the Code constants below, listed in
// docs/protocol.md) and Message says what is wrong. The errors of Dial,
// Probe and Report wrap it with the method's name, so its text reads
// "diagnostic.report: … (-32602)": find it with errors.As.
type Error = wire.Error

// The error codes a child can be answered with (docs/protocol.md).
const (
	CodeInvalidParams   = wire.CodeInvalidParams   // a bad report: the message names the field or rule
	CodeUnauthenticated = wire.CodeUnauthenticated // an unknown token, or one bound to another process
	CodeRevoked         = wire.CodeRevoked         // the token's runtime was reopened or closed
	CodeStorage         = wire.CodeStorage         // the mailbox could not store the report
	CodeShuttingDown    = wire.CodeShuttingDown    // serve is stopping
	CodeTooManyConns    = wire.CodeTooManyConns    // the token already holds its connections
	CodeForbidden       = wire.CodeForbidden       // a host method called with a child token, beyond its nested children
	CodeUnknownThread   = wire.CodeUnknownThread   // (a host) a thread never opened
)

// ErrNotHosted is returned by Dial when the environment names no host.
var ErrNotHosted = errors.New("no manager host: " + EnvSocket + " and " + EnvToken + " must both be set")

// Child is a child's connection to the service, bound to its runtime by
// its token. Its methods are safe for concurrent use.
type Child struct {
	conn *rpc.Conn
}

// Dial connects to socket and says hello with token. An empty socket or
// token is taken from EnvSocket or EnvToken; when either is still empty
// Dial returns ErrNotHosted. An unknown or revoked token is an *Error
// (CodeUnauthenticated, CodeRevoked).
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
	nc, err := dialSocket(socket)
	if err != nil {
		return nil, err
	}
	c := &Child{conn: rpc.New(nc, nc, nc, rpc.Options{Timeout: replyTimeout})}
	if err := c.call(wire.MethodHello, wire.HelloParams{Token: token}, nil); err != nil {
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
	if err := c.call(wire.MethodDiagnosticProbe, nil, &raw); err != nil {
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

// SendLimit and SendSourceLimit are the UTF-16 code units of message and
// source that Report sends: far past the service's cuts, so that the
// service redacts a secret that straddles its cut (redact, then cut), and
// small enough that a frame stays under the service's 64 KiB (at most 6
// bytes a unit once JSON-quoted: "<" is \u003c; TestReportWorstFrame).
const (
	SendLimit       = 8 << 10
	SendSourceLimit = 1000
)

// Report sends one diagnostic and returns once the service has taken it:
// delivered, and durable in the parent's mailbox, or dropped by policy
// (duplicate, rate, cap), which the service does not reveal. The message
// and source are sanitized first and cut to SendLimit units, so a report
// of any length fits in a frame; the service redacts secrets and then cuts
// to its limits (1000 and 80 units). The client does not redact: the
// service does, and a client that cut to 1000 itself would leave the start
// of a secret straddling that cut where the service could no longer
// recognize it (docs/redaction.md). A level other than diag.Info,
// diag.Warning or diag.Error, or a message blank once sanitized, is
// refused with an *Error of code CodeInvalidParams.
func (c *Child) Report(level diag.Level, message, source string) error {
	p := wire.ReportParams{Level: wire.Ptr(string(level)), Message: wire.Ptr(sanitize.Clean(message, SendLimit))}
	if src := sanitize.Clean(source, SendSourceLimit); src != "" {
		p.Source = &src
	}
	return c.call(wire.MethodDiagnosticReport, p, nil)
}

// Close closes the connection.
func (c *Child) Close() error { return c.conn.Close() }

// call makes one request; an error reply is an *Error wrapped with the
// method's name.
func (c *Child) call(method string, params, result any) error {
	return call(c.conn, method, params, result)
}

// call makes one request on conn; an error reply is an *Error wrapped
// with the method's name, unless the service's message names it already.
func call(conn *rpc.Conn, method string, params, result any) error {
	err := conn.Call(method, params, result)
	if e, ok := errors.AsType[*Error](err); ok && !strings.HasPrefix(e.Message, method+":") {
		return fmt.Errorf("%s: %w", method, err)
	}
	return err
}
