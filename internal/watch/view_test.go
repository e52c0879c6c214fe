package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// hostile are messages a child might send, raw, as a broken or hostile
// server might pass them on: watch sanitizes again before drawing.
var hostile = []string{
	"\x1b]0;PWNED\x07title set",
	"\x1b[2J\x1b[Hcleared screen",
	"\x1b[10;10Hmoved \x1b[5Acursor \x1b7\x1b8",
	"\x1b]8;;http://evil.example\x1b\\click me\x1b]8;;\x1b\\",
	"\u202eevil right-to-left\u202c done",
	"\x1b[35;1mmagenta\x1b[0m by the child",
	strings.Repeat("a very long message that never wraps ", 40),
	"漢字のメッセージは二つのセルを使う漢字のメッセージは二つのセルを使う漢字のメッセージ",
	"family 👨‍👩‍👧‍👦 and flags 🇫🇷 keycap 1️⃣ e\u0301\u0301\u0301",
	"multi\nline\r\nmessage\ttab",
}

func hostileState() *State {
	st := NewState()
	st.SetThreads([]wire.ThreadInfo{
		{Path: "/root/scout", Parent: "/root", Open: true, Generation: 2},
		{Path: "/root/scout/lint", Parent: "/root/scout", Open: true, Generation: 1},
		{Path: "/root/build", Parent: "/root", Generation: 1},
		{Path: "/k", Owner: "/root", Open: true, Generation: 1},
	})
	st.SetStatus(wire.Status{Path: "/root/scout", Parent: "/root", Open: true, Generation: 2})
	for i, msg := range hostile {
		at := t0.Add(time.Duration(i) * time.Second)
		level := []string{"info", "warning", "error"}[i%3]
		st.Apply(wire.Event{Kind: "delivered", Thread: "/root/scout", At: at, Level: level, Source: wire.Ptr("li\x1b[31mnt"), Message: wire.Ptr(msg)})
		st.Apply(wire.Event{Kind: "notified", Thread: "/root/scout", At: at, NotifyType: level, Message: wire.Ptr("/root/scout [lint]: " + msg)})
	}
	st.Apply(wire.Event{Kind: "held", Thread: "/k", At: t0, NotifyType: "error", Message: wire.Ptr("/k: held back")})
	st.Apply(wire.Event{Kind: "notified", At: t0, NotifyType: "error", Message: wire.Ptr("1 diagnostic notification was not shown")})
	st.Apply(wire.Event{Kind: "dropped", Thread: "/root/scout", Reason: "rate"})
	return st
}

// paint draws the model's screen into a terminal emulator and returns it
// with its rows as text. It fails the test if anything sets the title.
func paint(t *testing.T, m *Model) (*vt.Emulator, []string) {
	t.Helper()
	out := m.Render()
	lines := strings.Split(out, "\n")
	if len(lines) != m.h {
		t.Fatalf("%dx%d: %d lines", m.w, m.h, len(lines))
	}
	for i, l := range lines {
		if w := screenWidth(l); w != m.w {
			t.Fatalf("%dx%d: line %d is %d cells: %q", m.w, m.h, i, w, l)
		}
	}
	e := vt.NewEmulator(m.w, m.h)
	e.SetCallbacks(vt.Callbacks{Title: func(s string) { t.Errorf("title set to %q", s) }})
	for i, l := range lines {
		fmt.Fprintf(e, "\x1b[%d;1H%s", i+1, l)
	}
	rows := make([]string, m.h)
	for y := range m.h {
		var b strings.Builder
		for x := range m.w {
			c := e.CellAt(x, y)
			if c == nil {
				continue
			}
			if c.Link.URL != "" {
				t.Errorf("cell %d,%d links to %q", x, y, c.Link.URL)
			}
			b.WriteString(c.Content)
		}
		rows[y] = b.String()
	}
	return e, rows
}

// screenWidth is the cells a drawn line takes in the terminal: its text,
// styles stripped, measured by the sanitizer's tables (checked against
// tmux in sanitize's TestPaintedInTmux).
func screenWidth(l string) int { return sanitize.Width(ansi.Strip(l)) }

func resized(m *Model, w, h int) *Model {
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func TestScreenHoldsHostileText(t *testing.T) {
	for _, size := range [][2]int{{40, 12}, {80, 24}, {57, 19}, {132, 40}, {200, 60}} {
		w, h := size[0], size[1]
		m := resized(NewModel(hostileState(), nil, "/tmp/s\x1b]0;x\x07", time.UTC), w, h)
		m.sel = "/root/scout"
		_, rows := paint(t, m)
		// The edges are checked on the lines as drawn, whose widths
		// paint checked by the sanitizer's tables (tmux 3.3a's layout):
		// the emulator's own width model differs from it (a keycap is
		// two cells there, one in tmux).
		drawn := strings.Split(ansi.Strip(m.Render()), "\n")
		treeW := max(20, min(48, w*2/5))
		bodyH := h - 2 - m.feedHeight()
		for y := 1; y <= bodyH; y++ {
			r := []rune(drawn[y])
			first, last := "│", "│"
			switch y {
			case 1:
				first, last = "╭", "╮"
			case bodyH:
				first, last = "╰", "╯"
			}
			if string(r[0]) != first || string(r[len(r)-1]) != last {
				t.Errorf("%dx%d row %d: panel edges broken: %q", w, h, y, drawn[y])
			}
		}
		if !strings.HasPrefix(rows[bodyH+1], "╭") || !strings.HasPrefix(rows[h-2], "╰") {
			t.Errorf("%dx%d: feed box misplaced:\n%s", w, h, strings.Join(rows, "\n"))
		}
		screen := strings.Join(rows, "\n")
		for _, bad := range []string{"PWNED", "http", "\u202e", "]0;", "[2J"} {
			if strings.Contains(screen, bad) {
				t.Errorf("%dx%d: %q on screen", w, h, bad)
			}
		}
		if w >= 80 && (!strings.Contains(screen, "click me") || !strings.Contains(screen, "magenta by the child")) {
			t.Errorf("%dx%d: sanitized text missing:\n%s", w, h, screen)
		}
		if w >= 80 {
			// the detail panel shows its header, then newest first
			detail := rows[2][treeW:]
			if !strings.Contains(detail, "to /root") {
				t.Errorf("%dx%d detail: %q", w, h, detail)
			}
			if !strings.Contains(rows[5][treeW:], "multi line message tab") {
				t.Errorf("%dx%d: newest diagnostic not first: %q", w, h, rows[5])
			}
		}
	}
}

// TestColoursAreWatchs: the child's SGR is gone; the level colour is
// watch's, on the level word only.
func TestColoursAreWatchs(t *testing.T) {
	m := resized(NewModel(hostileState(), nil, "s", time.UTC), 120, 30)
	m.sel = "/root/scout"
	e, rows := paint(t, m)
	for y, r := range rows {
		i := strings.Index(r, "magenta by the child")
		if i < 0 {
			continue
		}
		x := ansi.StringWidth(r[:i])
		if c := e.CellAt(x, y); c.Style.Fg != nil || c.Style.Attrs != 0 {
			t.Fatalf("child text drawn with style %+v", c.Style)
		}
		lv := strings.Index(r, "error")
		if c := e.CellAt(ansi.StringWidth(r[:lv]), y); c.Style.Fg == nil {
			t.Fatalf("level word has no colour")
		}
		return
	}
	t.Fatal("message not on screen")
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

func TestKeys(t *testing.T) {
	m := resized(NewModel(hostileState(), nil, "s", time.UTC), 100, 30)
	rows := m.St.Rows()
	want := []string{"/root", "/root/build", "/root/scout", "/root/scout/lint", "/k"}
	for i, r := range rows {
		if r.Path != want[i] {
			t.Fatalf("rows = %+v", rows)
		}
	}
	if m.sel != "/root/build" {
		t.Fatalf("first selection %q", m.sel)
	}
	for _, k := range []string{"j", "down", "k", "enter"} {
		m.Update(key(k))
	}
	if m.sel != "/root/scout" {
		t.Fatalf("after j, down, k, enter: selected %q (cursor %d)", m.sel, m.cursor)
	}
	_, before := paint(t, m)
	m.Update(key("l"))
	m.Update(key("l")) // errors only
	_, after := paint(t, m)
	if strings.Contains(strings.Join(before, "\n"), "error") == false || strings.Contains(strings.Join(after[:m.h-2-m.feedHeight()], "\n"), "info   ") {
		t.Fatalf("filter: before\n%s\nafter\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
	for _, k := range []string{"q", "ctrl+c"} {
		if _, cmd := m.Update(key(k)); cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.Quit()) {
			t.Fatalf("%s does not quit", k)
		}
	}
	for range 20 {
		m.Update(key("up"))
	}
	if m.cursor != 0 {
		t.Fatalf("cursor %d after many ups", m.cursor)
	}
}

// A window under 40x12 says so in what fits: the whole of the longest
// message that does, wrapped at spaces, every line exactly the width.
func TestTooSmall(t *testing.T) {
	for _, c := range []struct {
		w, h int
		want string // the message's words, in order
	}{
		{39, 30, "window too small (39x30): need 40x12; q quits"},
		{30, 8, "window too small (30x8): need 40x12; q quits"},
		{100, 11, "window too small (100x11): need 40x12; q quits"},
		{20, 2, "window too small: need 40x12; q quits"},
		{21, 1, "too small: need 40x12"},
		{20, 1, "need 40x12"},
		{12, 2, "too small: need 40x12"},
		{10, 1, "need 40x12"},
		{6, 1, "need"}, // nothing fits whole: the shortest, cut
	} {
		m := resized(NewModel(hostileState(), nil, "s", time.UTC), c.w, c.h)
		lines := strings.Split(m.Render(), "\n")
		if len(lines) != c.h {
			t.Fatalf("%dx%d: %d lines", c.w, c.h, len(lines))
		}
		for _, l := range lines {
			if got := ansi.StringWidth(l); got != c.w {
				t.Fatalf("%dx%d: a line of %d cells: %q", c.w, c.h, got, l)
			}
		}
		if got := strings.Join(strings.Fields(ansi.Strip(strings.Join(lines, " "))), " "); !strings.HasPrefix(got, c.want) ||
			(c.w > 6 && got != c.want) {
			t.Errorf("%dx%d: says %q, want %q", c.w, c.h, got, c.want)
		}
	}
}

// The header counts in words a person reads: "1 thread", "2 threads".
func TestHeaderPlurals(t *testing.T) {
	st := NewState()
	st.SetThreads([]wire.ThreadInfo{{Path: "/root/a", Open: true}})
	st.Apply(wire.Event{Kind: wire.EventLost, Count: 1})
	m := resized(NewModel(st, nil, "s", time.UTC), 100, 30)
	if h := ansi.Strip(m.header()); !strings.Contains(h, "· 1 thread, 1 open") || !strings.Contains(h, "· 1 event lost") {
		t.Errorf("header %q", h)
	}
	st.SetThreads([]wire.ThreadInfo{{Path: "/root/b"}})
	st.Apply(wire.Event{Kind: wire.EventLost, Count: 2})
	if h := ansi.Strip(m.header()); !strings.Contains(h, "· 2 threads, 1 open") || !strings.Contains(h, "· 3 events lost") {
		t.Errorf("header %q", h)
	}
	if n := st.Feed(1)[0].Text; n != "the service dropped 2 events: watch did not read them in time" {
		t.Errorf("feed %q", n)
	}
}

// When the connection ends, the view quits (watch's help says it exits).
func TestClosedQuits(t *testing.T) {
	m := resized(NewModel(hostileState(), nil, "s", time.UTC), 100, 30)
	if _, cmd := m.Update(ClosedMsg{}); cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.Quit()) {
		t.Fatal("ClosedMsg does not quit")
	}
	if !strings.Contains(m.Render(), "DISCONNECTED") {
		t.Error("the last frame does not say DISCONNECTED")
	}
}

func TestTreeOrder(t *testing.T) {
	st := NewState()
	st.SetThreads([]wire.ThreadInfo{{Path: "/root/a-x"}, {Path: "/root/a/b/c"}, {Path: "/root/a"}, {Path: "/k/l"}, {Path: "/j", Owner: "/root"}})
	var got []string
	for _, r := range st.Rows() {
		got = append(got, fmt.Sprintf("%d:%s", r.Depth, r.Label))
	}
	want := "0:/root 1:a 2:b/c 1:a-x 0:/j 0:/k/l"
	if strings.Join(got, " ") != want {
		t.Fatalf("rows %v, want %s", got, want)
	}
}
