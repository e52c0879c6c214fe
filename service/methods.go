package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// MaxReadLimit is the most messages one mailbox.read returns, and its default.
const MaxReadLimit = 1000

// method is one JSON-RPC method; role says who may call it.
type method struct {
	role int32 // roleHost, roleChild, or roleNone for anyone
	call func(c *conn, params json.RawMessage) (any, *rpcError)
}

var methods map[string]method

func init() {
	methods = map[string]method{
		"session.hello":      {roleNone, (*conn).hello},
		"runtime.open":       {roleHost, (*conn).runtimeOpen},
		"runtime.close":      {roleHost, (*conn).runtimeClose},
		"thread.status":      {roleHost, (*conn).threadStatus},
		"mailbox.read":       {roleHost, (*conn).mailboxRead},
		"mailbox.ack":        {roleHost, (*conn).mailboxAck},
		"capabilities.probe": {roleHost, (*conn).probe},
		"thread.list":        {roleHost, (*conn).threadList},
		"events.subscribe":   {roleHost, (*conn).eventsSubscribe},
		"diagnostic.probe":   {roleChild, (*conn).probe},
		"diagnostic.report":  {roleChild, (*conn).report},
	}
}

func (c *conn) dispatch(req *request) (any, *rpcError) {
	m, ok := methods[req.Method]
	if !ok {
		return nil, errorf(CodeMethodNotFound, "method %q not found", clipName(req.Method))
	}
	if m.role != roleNone {
		switch role := c.role.Load(); {
		case role == roleNone:
			return nil, errorf(CodeUnauthenticated, "%s: send session.hello with a token first", req.Method)
		case role != m.role && m.role == roleHost:
			return nil, errorf(CodeForbidden, "%s is a host method; this connection is a child's", req.Method)
		case role != m.role:
			return nil, errorf(CodeForbidden, "%s is a child method; this connection is the host's", req.Method)
		}
		if m.role == roleChild && c.child.revoked.Load() {
			return nil, errorf(CodeRevoked, "%s: token revoked: runtime %s was reopened or closed", req.Method, c.child.path)
		}
	}
	return m.call(c, req.Params)
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// decodeParams fills v from an object; absent params count as {}. Type
// errors name the field.
func decodeParams(raw json.RawMessage, v any) *rpcError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] != '{' {
		return errorf(CodeInvalidParams, "params must be an object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errorf(CodeInvalidParams, "params: %s", describeJSONError(err))
	}
	return nil
}

func required(field, value string) *rpcError {
	if value == "" {
		return errorf(CodeInvalidParams, "params: field %q is required", field)
	}
	return nil
}

func pathParam(field, value string) *rpcError {
	if e := required(field, value); e != nil {
		return e
	}
	if err := relay.ValidatePath(value); err != nil {
		return errorf(CodeInvalidParams, "params: field %q: %v", field, err)
	}
	return nil
}

type empty struct{}

func (c *conn) hello(raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Token string `json:"token"`
	}
	if e := decodeParams(raw, &p); e != nil {
		return nil, e
	}
	if e := required("token", p.Token); e != nil {
		return nil, e
	}
	if c.fixedHost {
		return nil, errorf(CodeForbidden, "session.hello: the stdio peer is already the host")
	}
	if tok := c.s.cfg.HostToken; tok != "" && equalToken(p.Token, tok) {
		c.child = nil
		c.role.Store(roleHost)
		c.helloDone()
		return map[string]string{"role": "host"}, nil
	}
	b := c.s.tokens.lookup(p.Token)
	switch {
	case b == nil:
		return nil, errorf(CodeUnauthenticated, "session.hello: unknown token")
	case b.revoked.Load():
		return nil, errorf(CodeRevoked, "session.hello: token revoked: runtime %s was reopened or closed", b.path)
	}
	c.child = b
	c.role.Store(roleChild)
	c.helloDone()
	return struct {
		Role       string `json:"role"`
		Path       string `json:"path"`
		Generation uint64 `json:"generation"`
	}{"child", b.path, b.rt.Generation()}, nil
}

// helloDone lifts the hello deadline of a socket peer, unless Shutdown has
// set its own.
func (c *conn) helloDone() {
	if c.dl == nil {
		return
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if !c.s.shutting {
		c.dl.SetReadDeadline(time.Time{})
	}
}

func (c *conn) runtimeOpen(raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Path   string `json:"path"`
		Parent string `json:"parent"`
		Owner  string `json:"owner"`
	}
	if e := decodeParams(raw, &p); e != nil {
		return nil, e
	}
	if e := pathParam("path", p.Path); e != nil {
		return nil, e
	}
	c.s.openMu.Lock()
	defer c.s.openMu.Unlock()
	rt, err := c.s.mgr.Open(p.Path, p.Parent, p.Owner)
	if err != nil {
		if errors.Is(err, relay.ErrClosed) {
			return nil, errorf(CodeShuttingDown, "runtime.open: %v", err)
		}
		return nil, errorf(CodeInvalidParams, "runtime.open: %v", err)
	}
	b := c.s.tokens.bind(rt)
	c.s.events.opened(c.s.mgr, rt)
	return struct {
		Path       string `json:"path"`
		Token      string `json:"token"`
		Generation uint64 `json:"generation"`
	}{rt.Path(), b.token, rt.Generation()}, nil
}

// onlyPath decodes params that are just {path}.
func onlyPath(raw json.RawMessage) (string, *rpcError) {
	var p struct {
		Path string `json:"path"`
	}
	if e := decodeParams(raw, &p); e != nil {
		return "", e
	}
	return p.Path, pathParam("path", p.Path)
}

func (c *conn) runtimeClose(raw json.RawMessage) (any, *rpcError) {
	path, e := onlyPath(raw)
	if e != nil {
		return nil, e
	}
	if _, ok := c.s.mgr.Status(path); !ok {
		return nil, errorf(CodeUnknownThread, "runtime.close: thread %s was never opened", path)
	}
	c.s.openMu.Lock()
	defer c.s.openMu.Unlock()
	if b := c.s.tokens.revokePath(path); b != nil {
		b.rt.Close() // the live generation: open and bind happen under openMu
		c.s.events.closed(b.rt)
	}
	return empty{}, nil
}

func (c *conn) threadStatus(raw json.RawMessage) (any, *rpcError) {
	path, e := onlyPath(raw)
	if e != nil {
		return nil, e
	}
	st, ok := c.s.mgr.Status(path)
	if !ok {
		return nil, errorf(CodeUnknownThread, "thread.status: thread %s was never opened", path)
	}
	return st, nil
}

func (c *conn) mailboxRead(raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Recipient string `json:"recipient"`
		Limit     *int   `json:"limit"`
	}
	if e := decodeParams(raw, &p); e != nil {
		return nil, e
	}
	if e := pathParam("recipient", p.Recipient); e != nil {
		return nil, e
	}
	limit := MaxReadLimit
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > MaxReadLimit {
			return nil, errorf(CodeInvalidParams, "params: field \"limit\" must be 1 to %d", MaxReadLimit)
		}
		limit = *p.Limit
	}
	msgs, err := c.s.cfg.Mailbox.Read(p.Recipient, limit)
	if err != nil {
		return nil, errorf(CodeStorage, "mailbox.read: %v", err)
	}
	return struct {
		Messages []mailbox.Entry `json:"messages"`
	}{msgs}, nil
}

func (c *conn) mailboxAck(raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Recipient string    `json:"recipient"`
		IDs       *[]uint64 `json:"ids"`
	}
	if e := decodeParams(raw, &p); e != nil {
		return nil, e
	}
	if e := pathParam("recipient", p.Recipient); e != nil {
		return nil, e
	}
	if p.IDs == nil {
		return nil, errorf(CodeInvalidParams, "params: field \"ids\" is required (an array of message ids)")
	}
	n, err := c.s.cfg.Mailbox.Ack(p.Recipient, *p.IDs)
	if err != nil {
		return nil, errorf(CodeStorage, "mailbox.ack: %v", err)
	}
	return map[string]int{"acked": n}, nil
}

func (c *conn) probe(json.RawMessage) (any, *rpcError) {
	return capability.Capability{Version: capability.Version, Protocol: capability.Protocol}, nil
}

// report runs the params object through the child's runtime, exactly as an
// event on its bus. Policy drops (duplicate, rate, cap) answer {} like a
// delivery: the child learns nothing from them. An invalid report is
// counted and answered -32602 naming what is wrong, since that is the
// extension author's bug, not policy.
func (c *conn) report(raw json.RawMessage) (any, *rpcError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		c.child.rt.Report(nil) // counted as invalid
		return nil, errorf(CodeInvalidParams, "params must be an object {level, message, source?}")
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		c.child.rt.Report(nil)
		return nil, errorf(CodeInvalidParams, "params: %s", describeJSONError(err))
	}
	_, err := c.child.rt.Report(payload)
	switch {
	case err == nil:
		return empty{}, nil
	case errors.Is(err, diag.ErrInvalid):
		return nil, errorf(CodeInvalidParams, "%v", err)
	case errors.Is(err, relay.ErrClosed):
		return nil, errorf(CodeRevoked, "diagnostic.report: runtime %s was reopened or closed", c.child.path)
	default:
		return nil, errorf(CodeStorage, "diagnostic.report: %v", err)
	}
}
