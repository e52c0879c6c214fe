package service

import (
	"encoding/json"
	"time"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// This file is the wire: every params and result shape the service reads
// or writes, and the only JSON tags behind them. The relay, mailbox and
// capability types carry none, so renaming one of their fields cannot
// change the protocol. The contract is docs/protocol.md.

// response is an outgoing reply. ID is the request's id, already checked
// (a string of at most MaxIDBytes, an integer or null) and re-encoded.
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

// rpcError is a JSON-RPC error object; it is also a Go error. Message
// names a field or a rule, never a host path or an internal error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Params. Absent params count as {}; members not named here are ignored.

type helloParams struct {
	Token string `json:"token"`
}

type openParams struct {
	Path   string `json:"path"`
	Parent string `json:"parent"`
	Owner  string `json:"owner"`
	Bind   *bool  `json:"bind"` // nil: the server's default (serve --bind-peer)
}

type pathParams struct {
	Path string `json:"path"`
}

type readParams struct {
	Recipient string `json:"recipient"`
	Limit     *int   `json:"limit"`
}

type ackParams struct {
	Recipient string    `json:"recipient"`
	IDs       *[]uint64 `json:"ids"`
}

// reportParams are a child's report. Pointers tell absent or null from "".
type reportParams struct {
	Level   *string `json:"level"`
	Message *string `json:"message"`
	Source  *string `json:"source"`
}

// emptyParams are params that take no members (thread.list,
// events.subscribe).
type emptyParams struct{}

// Results.

type emptyResult struct{}

type hostHelloResult struct {
	Role string `json:"role"` // "host"
}

type childHelloResult struct {
	Role       string `json:"role"` // "child"
	Path       string `json:"path"`
	Generation uint64 `json:"generation"`
}

type openResult struct {
	Path       string `json:"path"`
	Token      string `json:"token"`
	Generation uint64 `json:"generation"`
}

type statusResult struct {
	Path        string             `json:"path"`
	Parent      string             `json:"parent"`
	Owner       string             `json:"owner"`
	Open        bool               `json:"open"`
	Generation  uint64             `json:"generation"`
	Diagnostics []diagnosticResult `json:"diagnostics"`
	Dropped     droppedResult      `json:"dropped"`
	peerMembers
}

// peerMembers are a thread's bound process, in thread.status and
// thread.list: Peer once it said hello, Exited once it exited (both of
// the latest generation), and the hellos refused over all generations.
type peerMembers struct {
	Peer        *peerResult `json:"peer,omitempty"`
	Exited      *time.Time  `json:"exited,omitempty"`
	PeerRefused uint64      `json:"peer_refused"`
}

type peerResult struct {
	PID int    `json:"pid"`
	UID uint32 `json:"uid"`
	Exe string `json:"exe"`
}

type diagnosticResult struct {
	Level   string    `json:"level"`
	Source  string    `json:"source"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

type droppedResult struct {
	Duplicate int `json:"duplicate"`
	Rate      int `json:"rate"`
	Cap       int `json:"cap"`
	Invalid   int `json:"invalid"`
}

type readResult struct {
	Messages []messageResult `json:"messages"`
	// Damaged lists, only when there are some, the ids of records that
	// failed their checksum or decoding: never served, removed by ack.
	Damaged []uint64 `json:"damaged,omitempty"`
}

type messageResult struct {
	ID        uint64    `json:"id"`
	Recipient string    `json:"recipient"`
	From      string    `json:"from"`
	Text      string    `json:"text"`
	Level     string    `json:"level"`
	Source    string    `json:"source"`
	Message   string    `json:"message"`
	At        time.Time `json:"at"`
}

type ackResult struct {
	Acked int `json:"acked"`
}

type probeResult struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
}

// uiNotify is the params of the ui.notify notification (pi's notify
// request). Thread is "" for the summary of notifications held back by the
// host-wide limit.
type uiNotify struct {
	Thread     string `json:"thread"`
	Message    string `json:"message"`
	NotifyType string `json:"notifyType"`
}

// Mappings from the library's types to the wire.

// Server-to-host notifications other than ui.notify.

// event is the params of one event notification. Members that do not
// belong to its kind are left out.
type event struct {
	Kind       string    `json:"kind"`
	Thread     string    `json:"thread"`
	At         time.Time `json:"at"`
	Parent     *string   `json:"parent,omitempty"`     // opened, reopened
	Owner      *string   `json:"owner,omitempty"`      // opened, reopened
	Generation uint64    `json:"generation,omitempty"` // opened, reopened, closed, exited
	Level      string    `json:"level,omitempty"`      // delivered
	Source     *string   `json:"source,omitempty"`     // delivered ("" when absent)
	Message    *string   `json:"message,omitempty"`    // delivered, notified, held
	NotifyType string    `json:"notifyType,omitempty"` // notified, held
	Reason     string    `json:"reason,omitempty"`     // dropped
	Count      uint64    `json:"count,omitempty"`      // lost
}

type threadsResult struct {
	Threads []threadInfo `json:"threads"`
}

// threadInfo is one entry of thread.list.
type threadInfo struct {
	Path        string        `json:"path"`
	Parent      string        `json:"parent"`
	Owner       string        `json:"owner"`
	Open        bool          `json:"open"`
	Generation  uint64        `json:"generation"`
	Diagnostics int           `json:"diagnostics"`
	Dropped     droppedResult `json:"dropped"`
	peerMembers
}

// wireReason names a drop as a dropped event's reason, the names of
// droppedResult's members: the wire's, not diag's String.
func wireReason(v diag.Verdict) string {
	switch v {
	case diag.DropDuplicate:
		return "duplicate"
	case diag.DropRate:
		return "rate"
	case diag.DropCap:
		return "cap"
	case diag.DropInvalid:
		return "invalid"
	}
	return "unknown"
}

func wireDropped(d relay.Dropped) droppedResult {
	return droppedResult{Duplicate: d.Duplicate, Rate: d.Rate, Cap: d.Cap, Invalid: d.Invalid}
}

func wireThreads(ts []relay.ThreadSummary) threadsResult {
	r := threadsResult{Threads: make([]threadInfo, len(ts))}
	for i, t := range ts {
		r.Threads[i] = threadInfo{Path: t.Path, Parent: t.Parent, Owner: t.Owner, Open: t.Open,
			Generation: t.Generation, Diagnostics: t.Diagnostics, Dropped: wireDropped(t.Dropped)}
	}
	return r
}

func wirePeer(info *peerInfo, exited time.Time, refused uint64) peerMembers {
	m := peerMembers{PeerRefused: refused}
	if info != nil {
		m.Peer = &peerResult{PID: info.pid, UID: info.uid, Exe: info.exe}
	}
	if !exited.IsZero() {
		m.Exited = &exited
	}
	return m
}

func wireStatus(s relay.Status) statusResult {
	r := statusResult{
		Path: s.Path, Parent: s.Parent, Owner: s.Owner, Open: s.Open, Generation: s.Generation,
		Diagnostics: make([]diagnosticResult, len(s.Diagnostics)),
		Dropped:     wireDropped(s.Dropped),
	}
	for i, d := range s.Diagnostics {
		r.Diagnostics[i] = diagnosticResult{Level: string(d.Level), Source: d.Source, Message: d.Message, At: d.At}
	}
	return r
}

func wirePage(p mailbox.Page) readResult {
	es := p.Messages
	r := readResult{Messages: make([]messageResult, len(es)), Damaged: p.Damaged}
	for i, e := range es {
		r.Messages[i] = messageResult{ID: e.ID, Recipient: e.Recipient, From: e.From, Text: e.Text,
			Level: string(e.Level), Source: e.Source, Message: e.Message, At: e.At}
	}
	return r
}

func wireProbe(c capability.Capability) probeResult {
	return probeResult{Version: c.Version, Protocol: c.Protocol}
}

func wireNotify(n relay.Notification) uiNotify {
	return uiNotify{Thread: n.Thread, Message: n.Text, NotifyType: string(n.Level)}
}
