package livedemo

import (
	"errors"
	"net"

	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// child is a child's socket connection. It sends its text raw, not
// through package client (which sanitizes first), so that what the view
// shows is what the service made of hostile text.
type child struct{ c *rpc.Conn }

func dialChild(socket, token string) (*child, error) {
	nc, err := net.Dial("unix", socket)
	if err != nil {
		return nil, err
	}
	c := &child{rpc.New(nc, nc, nc, rpc.Options{})}
	if err := c.c.Call(wire.MethodHello, wire.HelloParams{Token: token}, nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *child) Close() error { return c.c.Close() }

func (c *child) report(level, source, msg string) error {
	p := wire.ReportParams{Level: &level, Message: &msg}
	if source != "" {
		p.Source = &source
	}
	err := c.c.Call(wire.MethodDiagnosticReport, p, nil)
	if e, ok := errors.AsType[*wire.Error](err); ok && e.Code == wire.CodeInvalidParams {
		return nil // the invalid report is the demo's point: counted, not fatal
	}
	return err
}
