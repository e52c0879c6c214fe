package main

// The demo's text rendering: sections a person can read in 96 columns.
// Everything printed is the relay's sanitized output or the demo's own ASCII
// text; hostile input only ever appears Go-quoted (see describePayload).

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/relay"
)

const demoWidth = 96

// Texts longer than displayMax characters are cut to displayKeep for the
// screen, saying so; the JSON transcript has them whole.
const (
	displayMax  = 240
	displayKeep = 160
)

func displayCut(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= displayMax {
		return s
	}
	i, kept := 0, 0
	for kept < displayKeep {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		kept++
	}
	return s[:i] + fmt.Sprintf(" [... %d more characters cut for display; --json has all]", n-displayKeep)
}

// wrap splits s into lines of at most width characters, at spaces where it
// can and inside a word longer than a line where it must.
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
			// Hard split: fill the line with as much of the word as fits.
			take := width - n
			i := 0
			for j := 0; j < take; j++ {
				_, size := utf8.DecodeRuneInString(word[i:])
				i += size
			}
			line.WriteString(word[:i])
			flush()
			word, wn = word[i:], wn-take
		}
		line.WriteString(word)
		n += wn
	}
	if n > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

type demoPrinter struct{ w io.Writer }

// para prints s wrapped to the page, every line after prefix indented to
// prefix's width.
func (p demoPrinter) para(prefix, s string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	for i, l := range wrap(s, demoWidth-len(indent)) {
		if i == 0 {
			fmt.Fprintln(p.w, prefix+l)
		} else {
			fmt.Fprintln(p.w, indent+l)
		}
	}
}

func (p demoPrinter) heading(s string) {
	fmt.Fprintln(p.w)
	fmt.Fprintln(p.w, s)
	fmt.Fprintln(p.w, strings.Repeat("=", utf8.RuneCountInString(s)))
}

func (p demoPrinter) subheading(s string) {
	fmt.Fprintln(p.w)
	p.para("-- ", s)
}

func offset(ms int64) string { return fmt.Sprintf("+%d.%03ds", ms/1000, ms%1000) }

func printTranscript(w io.Writer, tr *demoTranscript) {
	p := demoPrinter{w}
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
		p.para(indent+"-> ", e.Result)
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
		t.Dropped.Duplicate+t.Dropped.Rate+t.Dropped.Cap+t.Dropped.Invalid,
		t.Dropped.Duplicate, t.Dropped.Rate, t.Dropped.Cap, t.Dropped.Invalid, len(t.SinkErrors)))
	for _, e := range t.SinkErrors {
		p.para("  sink error: ", e)
	}
}

// printTree draws the threads by lexical parent; a one-segment path is a
// root of its own.
func printTree(p demoPrinter, threads []demoThread) {
	children := map[string][]demoThread{}
	var roots []demoThread
	for _, t := range threads {
		if t.Parent == "" {
			roots = append(roots, t)
		} else {
			children[t.Parent] = append(children[t.Parent], t)
		}
	}
	var draw func(t demoThread, lead, branch string)
	draw = func(t demoThread, lead, branch string) {
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

func printNotifications(p demoPrinter, tr *demoTranscript) {
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
		text := displayCut(n.Text)
		if n.Summary {
			text = "[summary] " + text
		}
		p.para(fmt.Sprintf("  %-9s %-8s ", offset(n.AtMS), n.Level), text)
	}
}

func printMailboxes(p demoPrinter, tr *demoTranscript) {
	p.subheading("Parent messages (the mailbox): non-waking, for the recipient's model to read; " +
		"the exact text, labeled untrusted, with the fields JSON-quoted")
	for _, mb := range tr.Mailboxes {
		fmt.Fprintln(p.w)
		p.para("  ", fmt.Sprintf("to %s: %d unacknowledged, oldest first", mb.Recipient, len(mb.Messages)))
		for _, m := range mb.Messages {
			p.para(fmt.Sprintf("  #%-3d %-9s ", m.ID, offset(m.AtMS)), displayCut(m.Text))
		}
	}
}

func printStatuses(p demoPrinter, tr *demoTranscript) {
	p.subheading(fmt.Sprintf("Thread status (agent_status), read at %s before the manager closed",
		offset(tr.StatusAtMS)))
	for _, s := range tr.Statuses {
		fmt.Fprintln(p.w)
		state := "closed"
		if s.Open {
			state = "open"
		}
		to := s.Parent
		if to == "" {
			to = s.Owner
		}
		p.para("  ", fmt.Sprintf("%s  reports to %s; generation %d, %s", s.Path, to, s.Generation, state))
		kept := "all kept"
		if len(s.Diagnostics) < s.Delivered {
			kept = fmt.Sprintf("the newest %d kept", len(s.Diagnostics))
		}
		d := s.Dropped
		p.para("    ", fmt.Sprintf("delivered %d (%s); dropped: duplicate %d, rate %d, cap %d, invalid %d",
			s.Delivered, kept, d.Duplicate, d.Rate, d.Cap, d.Invalid))
		for _, g := range s.Diagnostics {
			text := displayCut(g.Message)
			if g.Source != "" {
				text = "[" + g.Source + "] " + text
			}
			p.para(fmt.Sprintf("    %-9s %-8s ", offset(g.AtMS), g.Level), text)
		}
	}
}
