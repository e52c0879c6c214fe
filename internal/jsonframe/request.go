// Package jsonframe reads the service's frames, one JSON-RPC 2.0 request
// object per line (docs/protocol.md, "Frames"): Reader splits a stream into
// frames of at most MaxFrame bytes with a bounded buffer, and Decode checks
// one frame strictly in a single pass of tokens (depth, member counts,
// repeated and unknown names, the id's shape) before anything is decoded.
// The service's methods then decode their params with DecodeParams.
package jsonframe

import "encoding/json"

// Request is a frame that passed the strict checks of Decode.
type Request struct {
	ID     json.RawMessage // nil: a notification, which gets no reply
	Method string
	Params []byte // the raw params value; nil when absent
}

// NullID is the id of a reply to a request whose own id is unknown.
var NullID = json.RawMessage("null")

// OrNull is id, or NullID when there is none.
func OrNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return NullID
	}
	return id
}
