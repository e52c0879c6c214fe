// Package rpc is the module's one JSON-RPC 2.0 client connection: one JSON
// object per line, as diagrelay serve speaks it (docs/protocol.md). Calls
// may be made from many goroutines; a reader goroutine matches replies to
// calls by id and queues the server's notifications.
//
// Package client builds the child's API on it, package watch its host
// connection (Lenient, BlockNotifications), the live demo its children
// that send raw text; the tests use it for the host side and for raw
// frames.
package rpc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// Notification is a frame from the server without an id, such as ui.notify.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Reply is a reply that matched no call: Err is a *wire.Error or nil.
type Reply struct {
	ID     json.RawMessage // as sent: "null" for a null id
	Result json.RawMessage
	Err    error
}

// ErrClosed is wrapped by the error of every call on a connection that
// has ended (the stream closed, broke or sent what ends it); the error's
// text says why.
var ErrClosed = errors.New("rpc: connection ended")

// endedError is why the reader stopped; it is ErrClosed too.
type endedError struct{ err error }

func (e endedError) Error() string   { return e.err.Error() }
func (e endedError) Unwrap() []error { return []error{e.err, ErrClosed} }

// Options tune a Conn; the zero value is a child's connection.
type Options struct {
	// Timeout bounds each Call (default 30 s); a negative Timeout lets a
	// call wait for its reply until the connection ends.
	Timeout time.Duration
	// KeepStrays queues replies that match no pending call on Strays
	// (replies to frames written with Write). Without it such a reply is a
	// broken server: every pending call fails and the connection ends,
	// except an error with a null id, which goes to the oldest pending call.
	KeepStrays bool
	// MaxFrame is the longest line read (default 1 MiB); a longer one ends
	// the connection.
	MaxFrame int
	// Lenient skips a line that is not a JSON-RPC frame, and a reply that
	// matches no call and is not kept (KeepStrays), instead of ending the
	// connection: for a peer whose other frames are still worth reading.
	Lenient bool
	// BlockNotifications makes the reader wait for room in a full
	// notification queue instead of dropping the notification, so replies
	// wait behind unread notifications: for a caller that reads every one
	// (a host following events). Close ends the wait.
	BlockNotifications bool
}

// notesBuffer bounds the queued notifications; beyond it they are dropped
// and counted, so that a caller that ignores them never stalls replies.
const notesBuffer = 4096

// Conn is a JSON-RPC client over one line-delimited stream.
type Conn struct {
	w       io.Writer
	closer  io.Closer
	opts    Options
	notes   chan Notification
	strays  chan Reply
	dropped atomic.Int64
	closed  chan struct{} // closed by Close
	once    sync.Once

	wmu sync.Mutex // one frame at a time on w

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan Reply
	done    bool
	err     error // why the reader stopped
}

// New starts a Conn reading r and writing w; Close closes c.
func New(r io.Reader, w io.Writer, c io.Closer, opts Options) *Conn {
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = 1 << 20
	}
	cn := &Conn{w: w, closer: c, opts: opts, pending: make(map[int64]chan Reply),
		notes: make(chan Notification, notesBuffer), closed: make(chan struct{})}
	if opts.KeepStrays {
		cn.strays = make(chan Reply, 64)
	}
	go cn.read(r)
	return cn
}

func (c *Conn) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), c.opts.MaxFrame)
	var err error
	for err == nil {
		if !sc.Scan() {
			err = sc.Err()
			if err == nil {
				err = io.EOF
			}
			err = fmt.Errorf("reading the reply: %w", err)
			break
		}
		err = c.dispatch(sc.Bytes())
	}
	err = endedError{err}
	c.mu.Lock()
	c.done, c.err = true, err
	for id, ch := range c.pending {
		ch <- Reply{Err: err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.notes)
	if c.strays != nil {
		close(c.strays)
	}
}

// dispatch routes one line; an error ends the connection.
func (c *Conn) dispatch(line []byte) error {
	var f wire.Frame // ID: empty when absent, "null" when null
	if err := json.Unmarshal(line, &f); err != nil {
		if c.opts.Lenient {
			return nil
		}
		return fmt.Errorf("bad reply %.80q: %w", line, err)
	}
	if len(f.ID) == 0 {
		return c.notify(Notification{Method: f.Method, Params: f.Params})
	}
	rep := Reply{ID: f.ID, Result: f.Result}
	if f.Error != nil {
		rep.Err = f.Error
	}
	var id int64
	matched := false
	c.mu.Lock()
	if string(f.ID) != "null" && json.Unmarshal(f.ID, &id) == nil {
		if ch, ok := c.pending[id]; ok {
			delete(c.pending, id)
			ch <- rep
			matched = true
		}
	}
	c.mu.Unlock()
	switch {
	case matched:
		return nil
	case c.strays != nil:
		select {
		case c.strays <- rep:
			return nil
		default:
			if c.opts.Lenient {
				return nil
			}
			return fmt.Errorf("unexpected reply %.80q", line)
		}
	case string(f.ID) == "null" && f.Error != nil:
		// An error the server could not tie to a request: it answers the
		// oldest call in flight.
		c.mu.Lock()
		oldest := int64(-1)
		for pid := range c.pending {
			if oldest < 0 || pid < oldest {
				oldest = pid
			}
		}
		if oldest >= 0 {
			c.pending[oldest] <- rep
			delete(c.pending, oldest)
		}
		c.mu.Unlock()
		return nil
	case c.opts.Lenient:
		return nil
	default:
		return fmt.Errorf("reply to another request (id %.40s)", f.ID)
	}
}

// notify queues n: dropped and counted when the queue is full, unless
// Options.BlockNotifications makes it wait (until Close).
func (c *Conn) notify(n Notification) error {
	if c.opts.BlockNotifications {
		select {
		case c.notes <- n:
			return nil
		case <-c.closed:
			return errors.New("closed while a notification waited for the reader")
		}
	}
	select {
	case c.notes <- n:
	default:
		c.dropped.Add(1)
	}
	return nil
}

// Call sends a request and waits for its reply; a non-nil result receives
// the decoded result. A JSON-RPC error reply is a *wire.Error.
func (c *Conn) Call(method string, params, result any) error {
	ch, err := c.send(method, params)
	if err != nil {
		return err
	}
	var timeout <-chan time.Time // nil: no limit
	if c.opts.Timeout > 0 {
		t := time.NewTimer(c.opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var rep Reply
	select {
	case rep = <-ch:
	case <-timeout:
		return fmt.Errorf("%s: no reply within %v", method, c.opts.Timeout)
	}
	if rep.Err != nil {
		return rep.Err
	}
	if result == nil {
		return nil
	}
	if raw, ok := result.(*json.RawMessage); ok {
		*raw = rep.Result
		return nil
	}
	if err := json.Unmarshal(rep.Result, result); err != nil {
		return fmt.Errorf("%s: bad reply %.80s: %w", method, rep.Result, err)
	}
	return nil
}

func (c *Conn) send(method string, params any) (<-chan Reply, error) {
	ch := make(chan Reply, 1)
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return nil, c.err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	req := wire.Request{JSONRPC: wire.Version, ID: strconv.AppendInt(nil, id, 10), Method: method, Params: params}
	b, err := json.Marshal(req)
	if err == nil {
		err = c.Write(b)
	}
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, err
	}
	return ch, nil
}

// Write sends one raw frame; a newline is added.
func (c *Conn) Write(frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(frame[:len(frame):len(frame)], '\n'))
	return err
}

// Notifications returns the queue of the server's notifications, in order;
// it is closed when the connection ends.
func (c *Conn) Notifications() <-chan Notification { return c.notes }

// DroppedNotifications counts those lost to a full queue.
func (c *Conn) DroppedNotifications() int64 { return c.dropped.Load() }

// Strays returns the queue of unmatched replies (Options.KeepStrays), or nil.
func (c *Conn) Strays() <-chan Reply { return c.strays }

// Close closes the stream; calls in flight fail.
func (c *Conn) Close() error {
	c.once.Do(func() { close(c.closed) })
	if c.closer == nil {
		return nil
	}
	return c.closer.Close()
}
