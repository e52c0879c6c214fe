package wire

import (
	"encoding/json"
	"fmt"
)

// Version is the "jsonrpc" member of every frame.
const Version = "2.0"

// Request is an outgoing request or notification (ID nil). The server
// reads requests with its own strict decoder (internal/jsonframe), so this
// shape is only ever encoded.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  any             `json:"params,omitempty"`
}

// Response is a reply: Result on success, Error otherwise. ID is the
// request's id as the server re-encoded it ("null" when it could not be
// read).
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Notification is a server-to-host message: ui.notify or event.
type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// Frame is any line a client reads: a reply (ID present, "null" for a
// null id) or a notification (ID empty, Method set).
type Frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Error is the JSON-RPC error object, and the module's one Go error for an
// error reply: the server returns it, the client connection hands it back
// from a call. Message names a field or a rule, never a host path or an
// internal error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// Errorf returns an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// JSON-RPC error codes. The first five are the standard ones; the rest
// are diagrelay's, in the range the specification leaves to servers. Each
// is described in docs/protocol.md.
const (
	CodeParseError     = -32700 // malformed JSON or invalid UTF-8
	CodeInvalidRequest = -32600 // not a request object, a frame over 64 KiB, nesting too deep
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602 // the message names the field
	CodeInternal       = -32603

	CodeUnauthenticated = -32001 // no session.hello yet, or an unknown token
	CodeForbidden       = -32002 // a child calling a host method, or the reverse
	CodeRevoked         = -32003 // the token's runtime was reopened or closed
	CodeUnknownThread   = -32004 // a path the server never opened
	CodeStorage         = -32005 // the mailbox could not store or read
	CodeShuttingDown    = -32006
	CodeTooManyConns    = -32007 // a child's limit: its token holds its connections, or it holds --max-nested threads
)

// Method names. Who may call each is in docs/protocol.md.
const (
	MethodHello             = "session.hello"      // anyone: HelloParams → HostHello or ChildHello
	MethodRuntimeOpen       = "runtime.open"       // host: OpenParams → OpenResult
	MethodRuntimeClose      = "runtime.close"      // host: PathParams → Empty
	MethodThreadStatus      = "thread.status"      // host: PathParams → Status
	MethodThreadList        = "thread.list"        // host: Empty → Threads
	MethodMailboxRead       = "mailbox.read"       // host: ReadParams → Page
	MethodMailboxAck        = "mailbox.ack"        // host: AckParams → AckResult
	MethodCapabilitiesProbe = "capabilities.probe" // host: → Probe
	MethodEventsSubscribe   = "events.subscribe"   // host: Empty → Empty, then events
	MethodDiagnosticProbe   = "diagnostic.probe"   // child: → Probe
	MethodDiagnosticReport  = "diagnostic.report"  // child: ReportParams → Empty
	MethodSpawnToken        = "spawn.token"        // host: PathParams → SpawnToken
	MethodSpawnOpen         = "spawn.open"         // anyone: SpawnOpenParams → OpenResult
)

// Notification methods, server to host.
const (
	NotifyUI    = "ui.notify" // params UINotify
	NotifyEvent = "event"     // params Event
)
