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
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// Conn is a host connection to serve: requests with replies, and the event
// notifications after Subscribe.
type Conn struct {
	nc net.Conn

	wmu sync.Mutex // one frame at a time
	mu  sync.Mutex
	id  int
	// pending maps a request id to where its reply goes; a request in
	// flight is the caller's own, so at most one per calling goroutine.
	pending map[int]chan reply
	err     error // set when the connection ended

	events chan Event
	done   chan struct{}
}

type reply struct {
	result json.RawMessage
	err    error
}

// Event is one event notification (docs/protocol.md). Strings are as the
// service sent them: sanitize before showing them.
type Event struct {
	Kind       string    `json:"kind"`
	Thread     string    `json:"thread"`
	At         time.Time `json:"at"`
	Parent     string    `json:"parent,omitempty"`
	Owner      string    `json:"owner,omitempty"`
	Generation uint64    `json:"generation,omitempty"`
	Level      string    `json:"level,omitempty"`
	Source     string    `json:"source,omitempty"`
	Message    string    `json:"message,omitempty"`
	NotifyType string    `json:"notifyType,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Count      uint64    `json:"count,omitempty"`
}

// RPCError is an error reply from the service.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// ErrClosed is returned by calls once the connection has ended.
var ErrClosed = errors.New("watch: connection closed")

// maxFrame bounds one incoming line; thread.list for 10,000 threads is
// about 1.5 MB.
const maxFrame = 64 << 20

// helloTimeout bounds the connection and the hello.
const helloTimeout = 10 * time.Second

// Dial connects to the socket and says hello with the host token (ASCII
// whitespace around it is ignored, so a token file's contents work as they
// are).
func Dial(socket, token string) (*Conn, error) {
	nc, err := net.DialTimeout("unix", socket, helloTimeout)
	if err != nil {
		return nil, err
	}
	c := &Conn{nc: nc, pending: make(map[int]chan reply), events: make(chan Event, 256), done: make(chan struct{})}
	// Something that is not serve may accept and never answer.
	nc.SetDeadline(time.Now().Add(helloTimeout))
	go c.read()
	var hello struct {
		Role string `json:"role"`
	}
	if err := c.Call("session.hello", map[string]string{"token": strings.TrimSpace(token)}, &hello); err != nil {
		nc.Close()
		return nil, fmt.Errorf("session.hello: %w", err)
	}
	if hello.Role != "host" {
		nc.Close()
		return nil, errors.New("session.hello: the token is not the host token")
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

// Events returns the event notifications, in order; it is closed when the
// connection ends. Whoever reads it must keep up: while it is not read,
// replies wait too (the service meanwhile counts what it could not send,
// and says so in a "lost" event).
func (c *Conn) Events() <-chan Event { return c.events }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Call sends one request and waits for its reply, decoded into result.
func (c *Conn) Call(method string, params, result any) error {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.id++
	id := c.id
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	c.wmu.Lock()
	_, err = c.nc.Write(append(b, '\n'))
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	r := <-ch
	if r.err != nil {
		return r.err
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(r.result, result)
}

func (c *Conn) read() {
	defer close(c.done)
	defer close(c.events)
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br)
		if err != nil {
			break
		}
		var f struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
		}
		if json.Unmarshal(line, &f) != nil {
			continue // not ours to judge; the service only sends JSON
		}
		if f.ID == nil {
			if f.Method == "event" {
				var ev Event
				if json.Unmarshal(f.Params, &ev) == nil {
					c.events <- ev
				}
			}
			continue // ui.notify: the events carry the same
		}
		c.mu.Lock()
		ch := c.pending[*f.ID]
		delete(c.pending, *f.ID)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		r := reply{result: f.Result}
		if f.Error != nil {
			r.err = f.Error
		}
		ch <- r
	}
	c.mu.Lock()
	c.err = ErrClosed
	for id, ch := range c.pending {
		ch <- reply{err: ErrClosed}
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

// readLine reads one frame of at most maxFrame bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxFrame {
			return nil, errors.New("watch: frame too large")
		}
		if err == nil {
			return buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				return buf, nil
			}
			return nil, err
		}
	}
}
