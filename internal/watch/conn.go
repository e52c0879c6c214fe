// Package watch is the live view of a running diagrelay serve: the session
// tree, each thread's diagnostics and drop counters, the notifications with
// the held-back summaries, and the mailbox's unread counts. It is what
// `diagrelay watch` shows, full-screen on a terminal (Model) or one line
// per event (Printer).
//
// Everything that came from the service is sanitized again before it is
// drawn, and cut to the cells it is given: a child's text can never set the
// terminal's title, clear it, move its cursor, link, pick a colour or push
// another panel out of place. The colours are watch's own, by level.
package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/wire"
)

// Conn is a host connection to serve: requests with replies, and the event
// notifications after Subscribe.
type Conn struct {
	rc     *rpc.Conn
	nc     net.Conn
	events chan wire.Event
	quit   chan struct{} // closed by Close: stop handing on events
	once   sync.Once
}

// ErrClosed is returned by calls once the connection has ended.
var ErrClosed = errors.New("watch: connection closed")

// maxFrame bounds one incoming line; thread.list for 10,000 threads is
// about 1.5 MB.
const maxFrame = 64 << 20

// helloTimeout bounds the connection and the hello.
const helloTimeout = 10 * time.Second

// connOptions: a line that is not a frame, or a reply nobody asked for, is
// not ours to judge (the service only sends JSON); events are never
// dropped here, the reader waits for Events to be read; and a call waits
// as long as the connection lives, since its reply may wait behind events.
var connOptions = rpc.Options{Timeout: -1, MaxFrame: maxFrame, Lenient: true, BlockNotifications: true}

// Dial connects to the socket and says hello with the host token (ASCII
// whitespace around it is ignored, so a token file's contents work as they
// are).
func Dial(socket, token string) (*Conn, error) {
	nc, err := net.DialTimeout("unix", socket, helloTimeout)
	if err != nil {
		return nil, err
	}
	c := &Conn{rc: rpc.New(nc, nc, nc, connOptions), nc: nc, events: make(chan wire.Event, 256), quit: make(chan struct{})}
	go c.handOn()
	// Something that is not serve may accept and never answer.
	nc.SetDeadline(time.Now().Add(helloTimeout))
	var hello wire.HostHello
	if err := c.Call(wire.MethodHello, wire.HelloParams{Token: strings.TrimSpace(token)}, &hello); err != nil {
		c.Close()
		return nil, fmt.Errorf("session.hello: %w", err)
	}
	if hello.Role != wire.RoleHost {
		c.Close()
		return nil, errors.New("session.hello: the token is not the host token")
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

// handOn decodes the event notifications onto Events until the connection
// ends; ui.notify is skipped, the events carry the same.
func (c *Conn) handOn() {
	defer close(c.events)
	for n := range c.rc.Notifications() {
		var ev wire.Event // strings as the service sent them: sanitize before showing them
		if n.Method != wire.NotifyEvent || json.Unmarshal(n.Params, &ev) != nil {
			continue
		}
		select {
		case c.events <- ev:
		case <-c.quit: // nobody reads any more: let the connection end
		}
	}
}

// Events returns the event notifications, in order; it is closed when the
// connection ends. Whoever reads it must keep up: while it is not read,
// replies wait too (the service meanwhile counts what it could not send,
// and says so in a "lost" event).
func (c *Conn) Events() <-chan wire.Event { return c.events }

// Close ends the connection.
func (c *Conn) Close() error {
	c.once.Do(func() { close(c.quit) })
	return c.rc.Close()
}

// Call sends one request and waits for its reply, decoded into result. An
// error reply is a *wire.Error; once the connection has ended, ErrClosed.
func (c *Conn) Call(method string, params, result any) error {
	err := c.rc.Call(method, params, result)
	if errors.Is(err, rpc.ErrClosed) {
		return ErrClosed
	}
	return err
}
