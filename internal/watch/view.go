package watch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/diagrelay/diagrelay/internal/frame"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/threadpath"
)

// Layout: a header line; the session tree beside the selected thread; the
// notification feed; a footer with the unread counts and the keys.
const (
	minWidth, minHeight = 40, 12
)

func (m *Model) feedHeight() int { return max(4, min(12, m.h/4)) }

func (m *Model) treeHeight() int { return m.h - 2 - m.feedHeight() - 2 }

// Render draws the whole screen as m.h lines of exactly m.w cells.
func (m *Model) Render() string {
	if m.w < minWidth || m.h < minHeight {
		return strings.Join(m.tooSmall(), "\n")
	}
	lines := make([]string, 0, m.h)
	lines = append(lines, m.header())
	bodyH := m.h - 2 - m.feedHeight()
	treeW := max(20, min(48, m.w*2/5))
	lines = append(lines, beside(m.tree(treeW, bodyH), m.detail(m.w-treeW, bodyH))...)
	lines = append(lines, m.feed(m.w, m.feedHeight())...)
	lines = append(lines, m.footer())
	return strings.Join(lines, "\n")
}

// tooSmall is the screen of a window under minWidth × minHeight: the
// longest of the messages that fits whole, wrapped at spaces onto its
// lines; in a window too small for any, as much of the shortest as fits.
func (m *Model) tooSmall() []string {
	w, h := max(m.w, 0), max(m.h, 0)
	out := blank(w, h)
	need := fmt.Sprintf("%dx%d", minWidth, minHeight)
	msgs := []string{
		fmt.Sprintf("window too small (%dx%d): need %s; q quits", m.w, m.h, need),
		"window too small: need " + need + "; q quits",
		"too small: need " + need,
		"need " + need,
	}
	for _, msg := range msgs {
		if lines, ok := wrap(msg, w, h); ok {
			for i, l := range lines {
				out[i] = fit([]span{{l, plain}}, w)
			}
			return out
		}
	}
	if h > 0 {
		out[0] = fit([]span{{msgs[len(msgs)-1], plain}}, w)
	}
	return out
}

// wrap breaks s at spaces into at most h lines of at most w cells, or
// reports false when a word is wider than w or more lines are needed.
func wrap(s string, w, h int) ([]string, bool) {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case width(word) > w:
			return nil, false
		case line == "":
			line = word
		case width(line)+1+width(word) <= w:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines, len(lines) <= h
}

func (m *Model) header() string {
	open := 0
	for _, t := range m.St.Threads {
		if t.Open {
			open++
		}
	}
	state := ""
	if m.closed {
		state = " · DISCONNECTED"
	}
	if m.err != nil {
		state += " · " + clean(m.err.Error())
	}
	if m.St.Lost > 0 {
		state += " · " + count(m.St.Lost, "event") + " lost"
	}
	text := fmt.Sprintf(" diagrelay watch · %s · %s, %d open%s", clean(m.title), count(uint64(len(m.St.Threads)), "thread"), open, state)
	return fit([]span{{text, header}}, m.w)
}

func (m *Model) tree(w, h int) []string {
	rows := m.St.Rows()
	inner := h - 2
	m.cursor = max(0, min(m.cursor, len(rows)-1))
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if inner > 0 && m.cursor >= m.top+inner {
		m.top = m.cursor - inner + 1
	}
	m.top = max(0, min(m.top, len(rows)-inner))
	body := make([][]span, 0, inner)
	for i := m.top; i < len(rows) && len(body) < inner; i++ {
		body = append(body, m.treeRow(rows[i], i == m.cursor))
	}
	return box(w, h, []span{{"session", bold}}, body)
}

func (m *Model) treeRow(r Row, under bool) []span {
	mark := "  "
	if r.Path == m.sel {
		mark = "▸ "
	}
	indent := strings.Repeat("  ", min(r.Depth, 12))
	var ss []span
	if r.Path == threadpath.Root {
		ss = []span{{mark + indent, plain}, {"◆ ", bold}, {r.Label, bold}, {" parent session", faint}}
	} else if t := m.St.Threads[r.Path]; t != nil {
		glyph, gs := "○ ", faint
		if t.Open {
			glyph, gs = "● ", openSt
		}
		ss = []span{{mark + indent, plain}, {glyph, gs}, {r.Label, plain}, {fmt.Sprintf(" g%d", t.Generation), faint}}
		if t.Exited != nil {
			ss = append(ss, span{" exited", levelStyle("warning")})
		}
		if t.Diagnostics > 0 {
			ss = append(ss, span{fmt.Sprintf(" ·%d", t.Diagnostics), faint})
		}
		if r.Depth == 0 && t.Owner != "" {
			ss = append(ss, span{" owner " + t.Owner, faint})
		}
	}
	if under {
		for i := range ss {
			ss[i].style = ss[i].style.Reverse(true)
		}
	}
	return ss
}

func (m *Model) detail(w, h int) []string {
	t := m.St.Threads[m.sel]
	if m.sel == threadpath.Root || t == nil {
		body := [][]span{{{"the parent session: the threads' reports reach it as parent messages", faint}}, {},
			{{"select a thread with ↑/↓ and enter", faint}}}
		if n, ok := m.St.Unread[threadpath.Root]; ok {
			body = append([][]span{{{"unread in its mailbox: " + m.unreadText(threadpath.Root, n), plain}}}, body...)
		}
		return box(w, h, []span{{threadpath.Root, bold}}, body)
	}
	state := "closed"
	if t.Open {
		state = "open"
	}
	title := []span{{t.Path, bold}, {fmt.Sprintf(" · gen %d · %s", t.Generation, state), faint}}
	if t.Edge != "" {
		title = append(title, span{" · at edge " + t.Edge, faint})
	}
	if t.Exited != nil {
		title = append(title, span{" · exited " + t.Exited.In(m.loc).Format("15:04:05"), levelStyle("warning")})
	}
	d := t.Dropped
	body := [][]span{
		{{"to ", faint}, {t.Recipient(), plain}, {fmt.Sprintf(" · %d/%d diagnostics held", t.Diagnostics, wire.StatusDiagnostics), faint}},
		{{"dropped: ", faint}, {fmt.Sprintf("duplicate %d · rate %d · cap %d · invalid %d", d.Duplicate, d.Rate, d.Cap, d.Invalid), plain},
			{" · redacted: ", faint}, {fmt.Sprintf("%d", t.Redacted.Total()), plain}},
		{{"levels: ", faint}, {filters[m.filter].name, bold}, {" (l to change) · newest first", faint}},
	}
	if p := t.Peer; p != nil || t.Exited != nil || t.PeerRefused > 0 {
		line := []span{{"process: ", faint}}
		if p != nil {
			line = append(line, span{fmt.Sprintf("pid %d · uid %d", p.PID, p.UID), plain})
			if p.Exe != "" {
				line = append(line, span{" · " + p.Exe, plain})
			}
		} else {
			line = append(line, span{"bound, no hello yet", faint})
		}
		if t.PeerRefused > 0 {
			line = append(line, span{fmt.Sprintf(" · %d hellos refused", t.PeerRefused), faint})
		}
		body = append(body[:2], append([][]span{line}, body[2:]...)...)
	}
	switch {
	case !t.Loaded:
		body = append(body, []span{{"loading…", faint}})
	case len(t.Diags) == 0:
		body = append(body, []span{{"no diagnostics yet", faint}})
	}
	for _, dg := range t.Diags {
		if !filters[m.filter].keep(dg.Level) {
			continue
		}
		line := []span{{dg.At.In(m.loc).Format("15:04:05") + " ", faint}, {fmt.Sprintf("%-7s ", dg.Level), levelStyle(dg.Level)}}
		if src := frame.Source(dg.Source); src != "" {
			line = append(line, span{"[" + src + "] ", bold})
		}
		body = append(body, append(line, span{dg.Message, plain}))
	}
	return box(w, h, title, body)
}

func (m *Model) feed(w, h int) []string {
	notes := m.St.Feed(max(h-2, 0))
	body := make([][]span, 0, len(notes))
	for _, n := range notes {
		var kind span
		switch n.Kind {
		case "held":
			kind = span{"held    ", faint}
		case "summary":
			kind = span{"summary ", summary}
		case "lost":
			kind = span{"lost    ", lostSt}
		default:
			kind = span{fmt.Sprintf("%-7s ", n.Level), levelStyle(n.Level)}
		}
		text := span{n.Text, plain}
		if n.Kind == "held" {
			text.style = faint
		}
		body = append(body, []span{{n.At.In(m.loc).Format("15:04:05") + " ", faint}, kind, text})
	}
	if len(body) == 0 {
		body = append(body, []span{{"no notifications yet", faint}})
	}
	return box(w, h, []span{{"notifications", bold}, {" · newest first · held = not shown by the host-wide limit", faint}}, body)
}

func (m *Model) unreadText(r string, n int) string {
	if m.St.AtLeast[r] {
		return fmt.Sprintf("%d+", n)
	}
	return fmt.Sprint(n)
}

func (m *Model) footer() string {
	rs := make([]string, 0, len(m.St.Unread))
	for r := range m.St.Unread {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r+" "+m.unreadText(r, m.St.Unread[r]))
	}
	unread := "unread: none"
	if len(parts) > 0 {
		unread = "unread: " + strings.Join(parts, " · ")
	}
	keys := " ↑↓/jk move · enter select · l levels · q quit"
	kw := min(width(keys), m.w/2)
	return fit([]span{{unread, plain}}, m.w-kw) + fit([]span{{keys, faint}}, kw)
}
