package watch

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/threadpath"
)

// Caller is what the Model needs of a connection: requests with replies.
// *Conn is one; nil means the Model only shows what it is sent.
type Caller interface {
	Call(method string, params, result any) error
}

// EventMsg carries one event into the Model.
type EventMsg wire.Event

// ClosedMsg says the connection to the service has ended.
type ClosedMsg struct{}

type statusMsg wire.Status

type unreadMsg struct {
	counts  map[string]int
	atLeast map[string]bool
}

type tickMsg struct{}

type listMsg []wire.ThreadInfo

// ErrMsg is a failed request the view shows in its header.
type ErrMsg struct{ Err error }

// Level filters of the `l` key.
var filters = []struct {
	name string
	keep func(level string) bool
}{
	{"all", func(string) bool { return true }},
	{"warning+", func(l string) bool { return l == "warning" || l == "error" }},
	{"error", func(l string) bool { return l == "error" }},
}

// UnreadLimit is the limit of each mailbox.read that counts a recipient's
// unread messages; a recipient at the limit shows "100+".
const UnreadLimit = 100

// maxUnreadRecipients bounds how many recipients one refresh reads.
const maxUnreadRecipients = 32

// RefreshEvery is how often the unread counts are read again (delivered
// events raise them in between; acks by another host lower them here).
const RefreshEvery = 5 * time.Second

// Model is the full-screen view, a bubbletea model.
type Model struct {
	St    *State
	c     Caller
	title string
	loc   *time.Location

	w, h   int
	cursor int    // row under the cursor
	sel    string // the selected thread's path
	filter int
	top    int // first tree row drawn
	closed bool
	err    error
}

// NewModel returns a view of st (already loaded from thread.list) that asks
// c for thread statuses and unread counts. title names the session (the
// socket) in the header; times are shown in loc (nil: local time).
func NewModel(st *State, c Caller, title string, loc *time.Location) *Model {
	if loc == nil {
		loc = time.Local
	}
	m := &Model{St: st, c: c, title: title, loc: loc, w: 80, h: 24}
	m.selectFirst()
	return m
}

// selectFirst selects the first thread, if none is selected yet.
func (m *Model) selectFirst() {
	if rows := m.St.Rows(); m.sel == "" && len(rows) > 1 {
		m.cursor, m.sel = 1, rows[1].Path
	}
}

// Init subscribes to the events, then loads the thread list, so that no
// change between the two is missed; it starts the unread refresh.
func (m *Model) Init() tea.Cmd {
	if m.c == nil {
		return nil
	}
	c := m.c
	load := func() tea.Msg {
		if err := c.Call(wire.MethodEventsSubscribe, wire.Empty{}, nil); err != nil {
			return ErrMsg{err}
		}
		var list wire.Threads
		if err := c.Call(wire.MethodThreadList, wire.Empty{}, &list); err != nil {
			return ErrMsg{err}
		}
		return listMsg(list.Threads)
	}
	return tea.Batch(load, tick())
}

func tick() tea.Cmd {
	return tea.Tick(RefreshEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update handles keys, resizes, events and replies.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m, m.key(msg.String())
	case EventMsg:
		m.St.Apply(wire.Event(msg))
	case ClosedMsg:
		m.closed = true
		return m, tea.Quit // the help says watch exits when serve goes away
	case ErrMsg:
		m.err = msg.Err
	case listMsg:
		m.St.SetThreads(msg)
		m.selectFirst()
		return m, tea.Batch(m.fetchStatus(m.sel), m.refreshUnread())
	case statusMsg:
		m.St.SetStatus(wire.Status(msg))
	case unreadMsg:
		m.St.Unread, m.St.AtLeast = msg.counts, msg.atLeast
	case tickMsg:
		// The selected thread's status too: a bound peer's hello has no
		// event of its own.
		return m, tea.Batch(m.refreshUnread(), m.fetchStatus(m.sel), tick())
	}
	return m, nil
}

func (m *Model) key(k string) tea.Cmd {
	rows := m.St.Rows()
	switch k {
	case "q", "ctrl+c":
		return tea.Quit
	case "up", "k":
		m.cursor--
	case "down", "j":
		m.cursor++
	case "pgup":
		m.cursor -= max(m.treeHeight(), 1)
	case "pgdown":
		m.cursor += max(m.treeHeight(), 1)
	case "home", "g":
		m.cursor = 0
	case "end", "G":
		m.cursor = len(rows) - 1
	case "enter", "space":
		if m.cursor >= 0 && m.cursor < len(rows) {
			m.sel = rows[m.cursor].Path
			return m.fetchStatus(m.sel)
		}
	case "l":
		m.filter = (m.filter + 1) % len(filters)
	}
	m.cursor = max(0, min(m.cursor, len(rows)-1))
	return nil
}

func (m *Model) fetchStatus(path string) tea.Cmd {
	if m.c == nil || path == "" || path == threadpath.Root {
		return nil
	}
	c := m.c
	return func() tea.Msg {
		var st wire.Status
		if c.Call(wire.MethodThreadStatus, wire.PathParams{Path: path}, &st) != nil {
			return nil
		}
		return statusMsg(st)
	}
}

// refreshUnread counts each recipient's unread messages with one
// mailbox.read of at most UnreadLimit messages.
func (m *Model) refreshUnread() tea.Cmd {
	if m.c == nil {
		return nil
	}
	c, rs := m.c, m.St.Recipients()
	rs = rs[:min(len(rs), maxUnreadRecipients)]
	return func() tea.Msg {
		out := unreadMsg{counts: map[string]int{}, atLeast: map[string]bool{}}
		for _, r := range rs {
			var res wire.Page
			limit := UnreadLimit
			if c.Call(wire.MethodMailboxRead, wire.ReadParams{Recipient: r, Limit: &limit}, &res) != nil {
				return nil
			}
			out.counts[r], out.atLeast[r] = len(res.Messages), len(res.Messages) >= UnreadLimit
		}
		return out
	}
}

// View draws the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}
