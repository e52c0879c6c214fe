package service

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON-RPC 2.0 error codes. The first five are the standard ones; the rest
// are diagrelay's, in the range the specification leaves to servers.
const (
	CodeParseError     = -32700 // malformed JSON
	CodeInvalidRequest = -32600 // not a request object, or a frame over 64 KiB
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602 // the message names the field
	CodeInternal       = -32603

	CodeUnauthenticated = -32001 // no session.hello yet, or an unknown token
	CodeForbidden       = -32002 // a child calling a host method, or the reverse
	CodeRevoked         = -32003 // the token's runtime was reopened or closed
	CodeUnknownThread   = -32004 // a path the server never opened
	CodeStorage         = -32005 // the mailbox could not store the message
	CodeShuttingDown    = -32006
)

// rpcError is a JSON-RPC error object; it is also a Go error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is an incoming frame. ID is kept raw so that a reply echoes it
// exactly; a request without "id" is a notification and gets no reply.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is an outgoing reply.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// notification is a server-to-host message, such as ui.notify.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

var nullID = json.RawMessage("null")

// decodeRequest parses one frame. On failure it returns the error to send
// and the id to send it with (null when the id could not be read).
func decodeRequest(frame []byte) (*request, json.RawMessage, *rpcError) {
	trimmed := bytes.TrimSpace(frame)
	if len(trimmed) == 0 {
		return nil, nullID, errorf(CodeInvalidRequest, "empty frame: send one JSON-RPC request object per line")
	}
	if !json.Valid(trimmed) {
		return nil, nullID, errorf(CodeParseError, "malformed JSON")
	}
	if trimmed[0] != '{' {
		return nil, nullID, errorf(CodeInvalidRequest, "a frame must be one JSON object (batches are not supported)")
	}
	var req request
	if err := json.Unmarshal(trimmed, &req); err != nil {
		// Valid JSON of the wrong shape: try to keep the id for the reply.
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		id := nullID
		if json.Unmarshal(trimmed, &probe) == nil && validID(probe.ID) {
			id = probe.ID
		}
		return nil, id, errorf(CodeInvalidRequest, "not a JSON-RPC request: %s", describeJSONError(err))
	}
	id := req.ID
	if id != nil && !validID(id) {
		return nil, nullID, errorf(CodeInvalidRequest, "id must be a string, a number or null")
	}
	if req.JSONRPC != "2.0" {
		return nil, orNull(id), errorf(CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	}
	if req.Method == "" {
		return nil, orNull(id), errorf(CodeInvalidRequest, `"method" is missing or empty`)
	}
	return &req, id, nil
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return nullID
	}
	return id
}

// describeJSONError names the field a type error is about.
func describeJSONError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return fmt.Sprintf("field %q is %s, want %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}
