package service

import (
	"encoding/json"
	"fmt"
)

// JSON-RPC 2.0 error codes. The first five are the standard ones; the rest
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
	CodeTooManyConns    = -32007 // the child token already holds its connections
)

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is a frame that passed the strict checks of decodeRequest.
type request struct {
	ID     json.RawMessage // nil: a notification, which gets no reply
	Method string
	Params []byte // the raw params value; nil when absent
}

var nullID = json.RawMessage("null")

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return nullID
	}
	return id
}
