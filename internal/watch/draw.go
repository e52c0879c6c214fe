package watch

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/diagrelay/diagrelay/sanitize"
)

// span is a run of sanitized text in one of watch's styles. Text is drawn
// only through fit, which cuts it to the cells it is given.
type span struct {
	text  string
	style lipgloss.Style
}

// Styles are watch's own: a child's text never picks one.
var (
	plain   = lipgloss.NewStyle()
	faint   = lipgloss.NewStyle().Faint(true)
	bold    = lipgloss.NewStyle().Bold(true)
	border  = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	header  = lipgloss.NewStyle().Bold(true).Reverse(true)
	openSt  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	summary = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("5"))
	lostSt  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("1"))
	levels  = map[string]lipgloss.Style{
		"info":    lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		"warning": lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		"error":   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
	}
)

func levelStyle(l string) lipgloss.Style {
	if s, ok := levels[l]; ok {
		return s
	}
	return plain
}

// width is the cells s (plain, sanitized text) takes in the terminal, by
// the sanitizer's tables, so that rows line up around wide, joined and
// combining characters.
func width(s string) int { return sanitize.Width(s) }

func spansWidth(ss []span) int {
	n := 0
	for _, s := range ss {
		n += width(s.text)
	}
	return n
}

// fit draws ss in exactly w cells: text past w is cut (ending in "…"),
// and the rest padded with spaces. It never yields a line break.
func fit(ss []span, w int) string {
	var b strings.Builder
	used := 0
	for _, s := range ss {
		left := w - used
		if left <= 0 {
			break
		}
		t := s.text
		if width(t) > left {
			t = sanitize.TruncateWidth(t, left, "…")
		}
		if t == "" {
			continue
		}
		used += width(t)
		b.WriteString(s.style.Render(t))
	}
	if used < w {
		b.WriteString(strings.Repeat(" ", w-used))
	}
	return b.String()
}

// box draws a bordered panel of exactly w×h cells with title on its top
// border; body lines past h-2 are not drawn.
func box(w, h int, title []span, body [][]span) []string {
	if w < 4 || h < 2 {
		return blank(w, h)
	}
	out := make([]string, 0, h)
	t := append([]span{{"─ ", border}}, title...)
	t = append(t, span{" ", border})
	tw := min(spansWidth(t), w-2)
	out = append(out, border.Render("╭")+fit(t, tw)+border.Render(strings.Repeat("─", w-2-tw)+"╮"))
	side := border.Render("│")
	for i := 0; i < h-2; i++ {
		var line []span
		if i < len(body) {
			line = body[i]
		}
		out = append(out, side+fit(line, w-2)+side)
	}
	return append(out, border.Render("╰"+strings.Repeat("─", w-2)+"╯"))
}

func blank(w, h int) []string {
	out := make([]string, h)
	for i := range out {
		out[i] = strings.Repeat(" ", max(w, 0))
	}
	return out
}

// beside joins two columns of lines of equal count.
func beside(a, b []string) []string {
	out := make([]string, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}
