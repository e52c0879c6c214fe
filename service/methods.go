package service

import (
	"errors"
	"strings"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/jsonframe"
	"github.com/diagrelay/diagrelay/internal/peercred"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/threadpath"
)

// method is one JSON-RPC method; who says who may call it, and nested
// which threads a child may name in a host method (nil: none; nested.go).
type method struct {
	who    connState // stateHost, stateChild, or statePending for anyone
	nested *nestedScope
	call   func(c *conn, params []byte) (any, *wire.Error)
}

var methods map[string]method

func init() {
	methods = map[string]method{
		wire.MethodHello:             {statePending, nil, (*conn).hello},
		wire.MethodRuntimeOpen:       {stateHost, belowOwnThread, (*conn).runtimeOpen},
		wire.MethodRuntimeClose:      {stateHost, belowOwnThread, (*conn).runtimeClose},
		wire.MethodThreadStatus:      {stateHost, belowOwnThread, (*conn).threadStatus},
		wire.MethodMailboxRead:       {stateHost, ownMailbox, (*conn).mailboxRead},
		wire.MethodMailboxAck:        {stateHost, ownMailbox, (*conn).mailboxAck},
		wire.MethodCapabilitiesProbe: {stateHost, nil, (*conn).probe},
		wire.MethodThreadList:        {stateHost, nil, (*conn).threadList},
		wire.MethodEventsSubscribe:   {stateHost, nil, (*conn).eventsSubscribe},
		wire.MethodDiagnosticProbe:   {stateChild, nil, (*conn).probe},
		wire.MethodDiagnosticReport:  {stateChild, nil, (*conn).report},
		wire.MethodSpawnToken:        {stateHost, nil, (*conn).spawnToken},
		wire.MethodSpawnOpen:         {statePending, nil, (*conn).spawnOpen},
	}
}

func (c *conn) dispatch(req *jsonframe.Request) (any, *wire.Error) {
	m, ok := methods[req.Method]
	if !ok {
		return nil, wire.Errorf(wire.CodeMethodNotFound, "method %s not found", jsonframe.QuoteName(req.Method))
	}
	if m.who != statePending {
		st, child := c.auth(), c.isChild()
		switch {
		case st == statePending:
			return nil, wire.Errorf(wire.CodeUnauthenticated, "%s: send session.hello with a token first", req.Method)
		case child && m.who == stateHost && m.nested == nil:
			return nil, wire.Errorf(wire.CodeForbidden, "%s is a host method; this connection is a child's", req.Method)
		case st == stateHost && m.who == stateChild:
			return nil, wire.Errorf(wire.CodeForbidden, "%s is a child method; this connection is the host's", req.Method)
		}
		if child && (st == stateRevoked || c.child.revoked.Load()) {
			return nil, wire.Errorf(wire.CodeRevoked, "%s: token revoked: runtime %s was reopened or closed", req.Method, c.child.path)
		}
		if child && m.who == stateHost {
			if e := c.nestedAllowed(req.Method, m.nested, req.Params); e != nil {
				return nil, e
			}
		}
	}
	return m.call(c, req.Params)
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func required(field, value string) *wire.Error {
	if value == "" {
		return wire.Errorf(wire.CodeInvalidParams, "params: field %q is required", field)
	}
	return nil
}

func pathParam(field, value string) *wire.Error {
	if e := required(field, value); e != nil {
		return e
	}
	if err := threadpath.Validate(value); err != nil {
		return wire.Errorf(wire.CodeInvalidParams, "params: field %q: %v", field, err)
	}
	return nil
}

func (c *conn) hello(raw []byte) (any, *wire.Error) {
	var p wire.HelloParams
	if e := jsonframe.DecodeParams(raw, &p); e != nil {
		return nil, e
	}
	// host.token ends with a newline: its contents work as they are.
	token := strings.Trim(p.Token, " \t\r\n\f\v")
	if e := required("token", token); e != nil {
		return nil, e
	}
	if c.fixedHost {
		return nil, wire.Errorf(wire.CodeForbidden, "session.hello: the stdio peer is already the host")
	}
	if tok := c.s.cfg.HostToken; tok != "" && equalToken(token, tok) {
		if e := c.admitHost(); e != nil {
			return nil, e
		}
		c.unbind()
		c.authenticate(stateHost)
		c.s.mu.Lock()
		c.s.hosts[c] = struct{}{}
		c.s.mu.Unlock()
		// A bound child's claim between the check and now closes the host
		// connections it finds in hosts (bind.go); one that was not there
		// yet when it looked is refused here.
		if e := c.admitHost(); e != nil {
			c.kill()
			return nil, e
		}
		c.s.authenticated(c)
		return wire.HostHello{Role: wire.RoleHost}, nil
	}
	b := c.s.tokens.lookup(token)
	if b == nil && c.s.cfg.Edge {
		var e *wire.Error
		if b, e = c.claimRemote(token); e != nil {
			return nil, e
		}
	}
	switch {
	case b == nil:
		return nil, wire.Errorf(wire.CodeUnauthenticated, "session.hello: unknown token")
	case b.revoked.Load():
		return nil, wire.Errorf(wire.CodeRevoked, "session.hello: token revoked: runtime %s was reopened or closed", b.path)
	}
	if e := c.claimLocal(b, token); e != nil {
		return nil, e
	}
	if b != c.child {
		if e := c.admitPeer(b); e != nil {
			return nil, e
		}
		max := c.s.maxConnsPerChild()
		if !c.s.tokens.attach(b, c, max) {
			c.s.stats.connLimited.Add(1)
			return nil, wire.Errorf(wire.CodeTooManyConns, "too many connections for this runtime (at most %d)", max)
		}
		c.unbind()
		c.child = b
	}
	// Charged to the token's share from here on (conn.bucket): the
	// pending peer's bucket is not kept for the connection's life.
	c.ownCost = nil
	c.authenticate(stateChild)
	c.s.authenticated(c)
	return wire.ChildHello{Role: wire.RoleChild, Path: b.path, Generation: b.gen}, nil
}

func (c *conn) runtimeOpen(raw []byte) (any, *wire.Error) {
	var p wire.OpenParams
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	if e := pathParam("path", p.Path); e != nil {
		return nil, e
	}
	if c.s.cfg.Edge {
		return nil, wire.Errorf(wire.CodeForbidden, "runtime.open: this server is a cluster edge: threads are opened on the home (docs/cluster.md)")
	}
	bind := c.s.cfg.BindPeer
	if p.Bind != nil {
		bind = *p.Bind
	}
	if bind && !peercred.Binding {
		return nil, wire.Errorf(wire.CodeInvalidParams, "params: field \"bind\": this system gives no peer credentials, so a token cannot be bound")
	}
	c.s.openMu.Lock()
	defer c.s.openMu.Unlock()
	opener := c.opener()
	if opener != nil && opener.revoked.Load() {
		// Checked under openMu: a generation that has ended opens nothing.
		return nil, wire.Errorf(wire.CodeRevoked, "runtime.open: token revoked: runtime %s was reopened or closed", opener.path)
	}
	if max := c.s.cfg.MaxNested; opener != nil && !c.s.tokens.nestedRoom(opener, p.Path, max) {
		c.s.stats.nestedLimited.Add(1)
		return nil, wire.Errorf(wire.CodeTooManyConns, "too many nested runtimes (at most %d live below %s)", max, opener.top.path)
	}
	b, e := c.s.openThread(p.Path, p.Parent, p.Owner, opener, nil, bind)
	if e != nil {
		return nil, e
	}
	return wire.OpenResult{Path: b.path, Token: b.token, Generation: b.gen}, nil
}

// openThread opens path for opener (nil: the host, or a spawn token's
// process when spawned is that token's count), its token bound to a
// process if bind, and publishes it. Called with openMu held.
func (s *Server) openThread(path, parent, owner string, opener *binding, spawned *nestedCount, bind bool) (*binding, *wire.Error) {
	rt, err := s.mgr.Open(path, parent, owner)
	if err != nil {
		if errors.Is(err, relay.ErrClosed) {
			return nil, wire.Errorf(wire.CodeShuttingDown, "runtime.open: server is shutting down")
		}
		return nil, wire.Errorf(wire.CodeInvalidParams, "runtime.open: %v", err)
	}
	var bound *boundPeer
	if bind {
		bound = s.newBound(rt.Generation())
	}
	s.peers.opened(rt.Path(), rt.Generation())
	b, old := s.tokens.bindToken(rt, NewToken(), opener, spawned, bound, s.now())
	if d := s.cfg.Directory; d != nil {
		st, _ := s.mgr.Status(rt.Path())
		err := d.Opened(b.token, DirectoryEntry{Path: rt.Path(), Parent: st.Parent, Owner: st.Owner, Generation: rt.Generation(), Bind: bound != nil})
		if err != nil {
			s.log.Error("cluster: runtime.open not published", "path", rt.Path(), "err", err)
			s.tokens.revokeIfLive(b)
			rt.Close()
			if old != nil {
				s.closeOpenedBy(old)
			}
			return nil, wire.Errorf(wire.CodeStorage, "runtime.open: the cluster could not record the thread")
		}
	}
	s.events.opened(s.mgr, rt)
	if old != nil {
		s.closeOpenedBy(old)
	}
	return b, nil
}

// onlyPath decodes params that are just {path}.
func onlyPath(raw []byte) (string, *wire.Error) {
	var p wire.PathParams
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return "", e
	}
	return p.Path, pathParam("path", p.Path)
}

func (c *conn) runtimeClose(raw []byte) (any, *wire.Error) {
	path, e := onlyPath(raw)
	if e != nil {
		return nil, e
	}
	_, known := c.s.mgr.Status(path)
	if d := c.s.cfg.Directory; d != nil && d.Closed(path) {
		known = true // opened by an earlier process of this home
	}
	if !known {
		return nil, wire.Errorf(wire.CodeUnknownThread, "runtime.close: thread %s was never opened", path)
	}
	c.s.openMu.Lock()
	defer c.s.openMu.Unlock()
	if b := c.s.tokens.revokePath(path); b != nil {
		b.rt.Close() // the live generation: open and bind happen under openMu
		c.s.events.closed(b.rt)
		c.s.closeOpenedBy(b)
	}
	return wire.Empty{}, nil
}

func (c *conn) threadStatus(raw []byte) (any, *wire.Error) {
	path, e := onlyPath(raw)
	if e != nil {
		return nil, e
	}
	st, ok := c.s.mgr.Status(path)
	if !ok {
		return nil, wire.Errorf(wire.CodeUnknownThread, "thread.status: thread %s was never opened", path)
	}
	return c.s.peers.status(wireStatus(st)), nil
}

func (c *conn) mailboxRead(raw []byte) (any, *wire.Error) {
	var p wire.ReadParams
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	if e := pathParam("recipient", p.Recipient); e != nil {
		return nil, e
	}
	limit := mailbox.MaxReadLimit
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > mailbox.MaxReadLimit {
			return nil, wire.Errorf(wire.CodeInvalidParams, "params: field \"limit\" must be 1 to %d", mailbox.MaxReadLimit)
		}
		limit = *p.Limit
	}
	page, err := c.s.cfg.Mailbox.ReadPage(p.Recipient, limit)
	if err != nil {
		c.s.log.Error("mailbox.read failed", "recipient", p.Recipient, "err", err)
		return nil, wire.Errorf(wire.CodeStorage, "mailbox.read: the mailbox could not be read")
	}
	return wirePage(page), nil
}

func (c *conn) mailboxAck(raw []byte) (any, *wire.Error) {
	var p wire.AckParams
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	if e := pathParam("recipient", p.Recipient); e != nil {
		return nil, e
	}
	if p.IDs == nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "params: field \"ids\" is required (an array of message ids)")
	}
	n, err := c.s.cfg.Mailbox.Ack(p.Recipient, *p.IDs)
	if err != nil {
		c.s.log.Error("mailbox.ack failed", "recipient", p.Recipient, "err", err)
		return nil, wire.Errorf(wire.CodeStorage, "mailbox.ack: the mailbox could not be written")
	}
	return wire.AckResult{Acked: n}, nil
}

// probe answers capabilities.probe and diagnostic.probe, which take no
// params members.
func (c *conn) probe(raw []byte) (any, *wire.Error) {
	var p wire.Empty
	if e := jsonframe.DecodeParamsStrict(raw, &p); e != nil {
		return nil, e
	}
	return wireProbe(capability.Current()), nil
}

// report runs the params object through the child's runtime, exactly as an
// event on its bus. Policy drops (duplicate, rate, cap) answer {} like a
// delivery: the child learns nothing from them. An invalid report is
// counted and answered -32602 naming the field or rule, since that is the
// extension author's bug, not policy. A mailbox failure is logged for the
// host and answered -32005 without its text, which names host paths.
func (c *conn) report(raw []byte) (any, *wire.Error) {
	rt := c.child.rt
	var p wire.ReportParams
	if e := jsonframe.DecodeParams(raw, &p); e != nil {
		rt.Report(nil) // counted as invalid, and paced as a drop
		c.paceDropped()
		return nil, e
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{"level", p.Level}, {"message", p.Message}} {
		if f.v == nil {
			rt.Report(nil)
			c.paceDropped()
			return nil, wire.Errorf(wire.CodeInvalidParams, "params: field %q is required (a string)", f.name)
		}
	}
	// A diag.Report, not a map: Parse cleans the same three strings either
	// way, and the map and its boxed strings were a report's largest
	// allocation in the service.
	payload := diag.Report{Level: diag.Level(*p.Level), Message: *p.Message, Source: ptrOr(p.Source)}
	// The sanitizer goes through the text: that is work too.
	c.charge(len(*p.Message) + len(ptrOr(p.Source)))
	// The slot is given back for the report: a delivered one waits for its
	// mailbox commit, and that wait must not hold up the other children or
	// keep their posts out of the same commit.
	c.s.sched.release()
	v, err := rt.Report(payload)
	c.s.sched.acquire()
	switch {
	case err == nil:
		if v != diag.Delivered {
			c.paceDropped()
		}
		return wire.Empty{}, nil
	case errors.Is(err, diag.ErrInvalid):
		c.paceDropped()
		// With the types checked above, Parse's reasons name a rule only
		// ("level ... is not info, warning or error", "message is blank
		// after sanitizing").
		return nil, wire.Errorf(wire.CodeInvalidParams, "params: %s", strings.TrimPrefix(err.Error(), "diag: "))
	case errors.Is(err, relay.ErrClosed):
		return nil, wire.Errorf(wire.CodeRevoked, "diagnostic.report: runtime %s was reopened or closed", c.child.path)
	default:
		c.s.log.Error("mailbox post failed", "thread", c.child.path, "err", err)
		return nil, wire.Errorf(wire.CodeStorage, "diagnostic.report: the mailbox could not store the report; it is in the thread's status only")
	}
}
