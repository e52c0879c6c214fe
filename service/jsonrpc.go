package service

import "encoding/json"

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
