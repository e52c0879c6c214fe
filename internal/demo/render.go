package demo

// The demo's text rendering: sections a person can read in 96 columns.
// Everything printed is the relay's sanitized output or the demo's own ASCII
// text; hostile input only ever appears Go-quoted (see describePayload).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// Width is the text's page width, in characters.
const Width = 96

// Texts longer than displayMax characters are cut to displayKeep for the
// screen, saying how many characters of the message were cut: one count,
// wherever the same message is shown. The JSON transcript has them whole.
const (
	displayMax  = 240
	displayKeep = 160
)

// displayCut cuts a long message for the screen.
func displayCut(msg string) string {
	n := utf8.RuneCountInString(msg)
	if n <= displayMax {
		return msg
	}
	return firstRunes(msg, displayKeep) + cutNote(n-displayKeep)
}

func cutNote(n int) string {
	return fmt.Sprintf(" [... %d more characters cut for display; --json has all]", n)
}

func firstRunes(s string, n int) string {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// wrap splits s into lines of at most width characters, at spaces where it
// can and inside a word longer than a line where it must; even then it
// never splits a Go escape such as \u202e or \U000e0069, which is wider
// than the line only when the line is narrower than 10 characters.
func wrap(s string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0
	flush := func() {
		lines = append(lines, line.String())
		line.Reset()
		n = 0
	}
	for _, word := range strings.Split(s, " ") {
		wn := utf8.RuneCountInString(word)
		if n > 0 && n+1+wn > width {
			flush()
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		for wn > width-n {
			// Hard split: fill the line with as many whole atoms of the
			// word as fit, at least one.
			i, taken := 0, 0
			for i < len(word) {
				size, runes := atom(word[i:])
				if taken+runes > width-n && (taken > 0 || n > 0) {
					break
				}
				i += size
				taken += runes
			}
			if i == 0 { // not even one atom fits after what the line has
				flush()
				continue
			}
			line.WriteString(word[:i])
			flush()
			word, wn = word[i:], wn-taken
		}
		line.WriteString(word)
		n += wn
	}
	if n > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// atom returns the length in bytes and in characters of the unit s starts
// with: a Go escape as strconv.QuoteToASCII writes them, or one character.
func atom(s string) (size, runes int) {
	if len(s) >= 2 && s[0] == '\\' {
		n := 2
		switch c := s[1]; {
		case c == 'x':
			n = 4
		case c == 'u':
			n = 6
		case c == 'U':
			n = 10
		case c >= '0' && c <= '7':
			n = 4
		}
		n = min(n, len(s))
		return n, n // escapes are ASCII
	}
	_, size = utf8.DecodeRuneInString(s)
	return size, 1
}

type printer struct{ w io.Writer }

// para prints s wrapped to the page, every line after prefix indented to
// prefix's width.
func (p printer) para(prefix, s string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	for i, l := range wrap(s, Width-len(indent)) {
		if i == 0 {
			fmt.Fprintln(p.w, prefix+l)
		} else {
			fmt.Fprintln(p.w, indent+l)
		}
	}
}

func (p printer) heading(s string) {
	fmt.Fprintln(p.w)
	fmt.Fprintln(p.w, s)
	fmt.Fprintln(p.w, strings.Repeat("=", utf8.RuneCountInString(s)))
}

func (p printer) subheading(s string) {
	fmt.Fprintln(p.w)
	p.para("-- ", s)
}

func offset(ms int64) string { return fmt.Sprintf("+%d.%03ds", ms/1000, ms%1000) }

// Render prints tr for a person, in Width columns.
func Render(w io.Writer, tr *Transcript) {
	p := printer{w}
	l := tr.Limits
	p.para("", "diagrelay demo: what a parent session sees from its children's extensions")
	p.para("", fmt.Sprintf("Parent mode %s. Times are offsets on a simulated monotonic clock, so the run "+
		"is instant and the same every time. Limits: per child runtime %d reports per %d s, %d per "+
		"generation, exact duplicates dropped; host-wide %g notification/s, burst %d.",
		tr.Mode, l.WindowReports, l.WindowMS/1000, l.CapPerRuntime, l.NotifyPerSecond, l.NotifyBurst))

	p.heading("1. The session tree")
	printTree(p, tr.Threads)

	p.heading("2. What the extensions did (hostile input shown Go-quoted)")
	for _, e := range tr.Events {
		prefix := fmt.Sprintf("%-9s %-17s ", offset(e.AtMS), e.Thread)
		p.para(prefix, e.What)
		indent := strings.Repeat(" ", len(prefix))
		if e.Sent != "" {
			p.para(indent+"sent: ", e.Sent)
		}
		p.para(indent+"-> ", resultText(e))
	}

	p.heading("3. What the parent session sees")
	printNotifications(p, tr)
	printMailboxes(p, tr)
	printStatuses(p, tr)

	p.heading("Summary")
	t := tr.Totals
	summaries := "summaries"
	if t.Summaries == 1 {
		summaries = "summary"
	}
	shown := fmt.Sprintf("%d notifications shown, %d held back and counted in %d %s",
		t.NotificationsShown, t.NotShown, t.Summaries, summaries)
	if tr.Mode == string(relay.ModePrint) {
		shown = "no notifications (print mode)"
	}
	p.para("", fmt.Sprintf("%d child threads; %d reports delivered: %d parent messages, %s; "+
		"%d dropped silently (duplicate %d, rate %d, cap %d, invalid %d); %d sink errors.",
		t.ChildThreads, t.Delivered, t.Messages, shown,
		t.Dropped.Total(), t.Dropped.Duplicate, t.Dropped.Rate, t.Dropped.Cap, t.Dropped.Invalid, len(t.SinkErrors)))
	for _, e := range t.SinkErrors {
		p.para("  sink error: ", e)
	}
}

// printTree draws the threads by lexical parent; a one-segment path is a
// root of its own.
func printTree(p printer, threads []Thread) {
	children := map[string][]Thread{}
	var roots []Thread
	for _, t := range threads {
		if t.Parent == "" {
			roots = append(roots, t)
		} else {
			children[t.Parent] = append(children[t.Parent], t)
		}
	}
	var draw func(t Thread, lead, branch string)
	draw = func(t Thread, lead, branch string) {
		label := lead + branch + t.Path
		note := t.Role
		switch {
		case t.Owner != "":
			note += "; owner " + t.Owner + ", so it reports to " + t.ReportsTo
		case t.ReportsTo != "":
			note += "; reports to " + t.ReportsTo
		}
		p.para(fmt.Sprintf("%-26s", label), note)
		kids := children[t.Path]
		next := lead
		switch branch {
		case "|-- ":
			next += "|   "
		case "`-- ":
			next += "    "
		}
		for i, k := range kids {
			b := "|-- "
			if i == len(kids)-1 {
				b = "`-- "
			}
			draw(k, next, b)
		}
	}
	for _, r := range roots {
		draw(r, "", "")
	}
}

func printNotifications(p printer, tr *Transcript) {
	switch relay.Mode(tr.Mode) {
	case relay.ModePrint:
		p.subheading("UI notifications: none. In print mode there is no UI; the parent messages " +
			"below carry every report, and nothing is written to stderr instead.")
		return
	case relay.ModeRPC:
		p.subheading(fmt.Sprintf("UI notifications (%d): in rpc mode each is a notify request "+
			"{message, notifyType} to the host; notifyType is the level shown", len(tr.Notifications)))
	default:
		p.subheading(fmt.Sprintf("UI notifications (%d): in tui mode each is a toast in the "+
			"parent's terminal, at the level shown", len(tr.Notifications)))
	}
	for _, n := range tr.Notifications {
		prefix := fmt.Sprintf("  %-9s %-8s ", offset(n.AtMS), n.Level)
		if !n.Summary {
			p.para(prefix, notificationCut(n))
			continue
		}
		p.para(prefix, "[summary] "+n.Text)
		indent := strings.Repeat(" ", len(prefix))
		p.para(indent, fmt.Sprintf("level %s: the most severe of the %d held back, which were:",
			n.Level, len(n.HeldBack)))
		for _, h := range n.HeldBack {
			p.para(indent+"  ", fmt.Sprintf("%s %s %s %s", offset(h.AtMS), h.Thread, h.Level, reportText(h.Source, h.Message)))
		}
	}
}

// notificationCut cuts a notification's message, not its frame, so that
// the count of cut characters is the message's, as everywhere else.
func notificationCut(n Notification) string {
	frame := 0
	if rest, ok := strings.CutPrefix(n.Text, n.Thread+" ["); ok {
		// The frame-safe source has no "]", so the first "]: " ends it.
		frame = len(n.Text) - len(rest) + strings.Index(rest, "]: ") + 3
	} else if strings.HasPrefix(n.Text, n.Thread+": ") {
		frame = len(n.Thread) + 2
	}
	return n.Text[:frame] + displayCut(n.Text[frame:])
}

// reportText is `[source] "message"`, or `"message"`, cut for the screen.
func reportText(source, message string) string {
	q := fmt.Sprintf("%q", displayCut(message))
	if source == "" {
		return q
	}
	return "[" + source + "] " + q
}

// resultText is an event's result with the delivered report and what the
// host-wide limit did with its notification.
func resultText(e Event) string {
	r := e.Result
	if d := e.Delivered; d != nil {
		r = "delivered as " + d.Level + " " + reportText(d.Source, d.Message)
	}
	if t := e.Tally; t != nil && t.HeldBack > 0 {
		if t.Delivered == 1 {
			r += "; its notification was held back by the host-wide limit (see the summary)"
		} else {
			r += fmt.Sprintf("; %d of their notifications were held back by the host-wide limit", t.HeldBack)
		}
	}
	return r
}

func printMailboxes(p printer, tr *Transcript) {
	p.subheading("Parent messages (the mailbox): non-waking, for the recipient's model to read; " +
		"the exact text, labeled untrusted, with the fields JSON-quoted")
	for _, mb := range tr.Mailboxes {
		fmt.Fprintln(p.w)
		p.para("  ", fmt.Sprintf("to %s: %d unacknowledged, oldest first", mb.Recipient, len(mb.Messages)))
		for _, m := range mb.Messages {
			text := m.Text
			if cut := displayCut(m.Message); cut != m.Message {
				// The parent message with its message cut: the relay's own
				// wording, then the one count of cut characters.
				text = relay.MessageText(m.From, diag.Report{Level: diag.Level(m.Level), Source: m.Source,
					Message: firstRunes(m.Message, displayKeep)})
				text = strings.TrimSuffix(text, `"}`) + cutNote(utf8.RuneCountInString(m.Message)-displayKeep)
			}
			if m.Notification == NotificationHeldBack {
				text += " (its notification was held back by the host-wide limit)"
			}
			p.para(fmt.Sprintf("  #%-3d %-9s ", m.ID, offset(m.AtMS)), text)
		}
	}
}

func printStatuses(p printer, tr *Transcript) {
	p.subheading(fmt.Sprintf("Thread status (agent_status), read at %s before the manager closed",
		offset(tr.StatusAtMS)))
	for _, s := range tr.Statuses {
		fmt.Fprintln(p.w)
		state := "closed"
		if s.Open {
			state = "open"
		}
		p.para("  ", fmt.Sprintf("%s  reports to %s; generation %d, %s", s.Path, s.ReportsTo, s.Generation, state))
		kept := "all kept"
		if len(s.Diagnostics) < s.Delivered {
			kept = fmt.Sprintf("the newest %d kept", len(s.Diagnostics))
		}
		d := s.Dropped
		redacted := 0
		for _, n := range s.Redacted {
			redacted += n
		}
		p.para("    ", fmt.Sprintf("delivered %d (%s); dropped: duplicate %d, rate %d, cap %d, invalid %d; secrets redacted %d",
			s.Delivered, kept, d.Duplicate, d.Rate, d.Cap, d.Invalid, redacted))
		for _, g := range s.Diagnostics {
			text := displayCut(g.Message)
			if g.Source != "" {
				text = "[" + g.Source + "] " + text
			}
			p.para(fmt.Sprintf("    %-9s %-8s ", offset(g.AtMS), g.Level), text)
		}
	}
}

// WriteText renders tr to w, buffered.
func WriteText(w io.Writer, tr *Transcript) error {
	bw := bufio.NewWriter(w)
	Render(bw, tr)
	return bw.Flush()
}

// WriteJSON writes tr as one indented JSON document, HTML escaping off.
func WriteJSON(w io.Writer, tr *Transcript) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tr); err != nil {
		return err
	}
	return bw.Flush()
}
