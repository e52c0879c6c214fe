package demo

import (
	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// collect reads what the parent sees into the transcript.
func (d *scenario) collect() {
	tr := d.tr
	s := d.sinks
	fate, notes := s.fates(d.mode != relay.ModePrint)
	tr.Notifications = notes
	s.mu.Lock()
	tr.Totals.SinkErrors = append([]string{}, s.sinkErrs...)
	// A stored message is found again by what only it has: its sender,
	// text and time (the gate delivers no duplicate within a generation,
	// and generations start at different times).
	type key struct {
		from, text string
		at         int64
	}
	fateOf := make(map[key]string, len(s.posted))
	for i, m := range s.posted {
		fateOf[key{m.From, m.Text, m.At.UnixNano()}] = fate[i]
	}
	s.mu.Unlock()

	for i, e := range tr.Events {
		if e.Tally == nil {
			continue
		}
		for _, p := range d.posts[i] {
			if fate[p] == NotificationHeldBack {
				tr.Events[i].Tally.HeldBack++
			}
		}
	}

	for _, th := range tr.Threads {
		entries, err := s.box.Read(th.Path, mailbox.MaxReadLimit)
		if err != nil {
			tr.Totals.SinkErrors = append(tr.Totals.SinkErrors, "reading the mailbox: "+err.Error())
			continue
		}
		if len(entries) == 0 {
			continue
		}
		mb := Mailbox{Recipient: th.Path}
		for _, e := range entries {
			mb.Messages = append(mb.Messages, Message{
				ID: e.ID, From: e.From, Text: e.Text, Level: string(e.Level),
				Source: e.Source, Message: e.Message, AtMS: sinceStart(e.At),
				Notification: fateOf[key{e.From, e.Text, e.At.UnixNano()}],
			})
		}
		tr.Mailboxes = append(tr.Mailboxes, mb)
		tr.Totals.Messages += len(entries)
	}

	tr.StatusAtMS = sinceStart(d.clock.Now())
	for _, th := range tr.Threads[1:] {
		st, ok := d.mgr.Status(th.Path)
		if !ok {
			continue
		}
		ds := Status{
			Path: st.Path, Parent: st.Parent, Owner: st.Owner, ReportsTo: st.Recipient(), Open: st.Open,
			Generation: st.Generation, Delivered: s.postedFrom(st.Path), Dropped: st.Dropped,
			Diagnostics: []Diagnostic{}, Redacted: map[string]int{},
		}
		for id, n := range st.Redacted {
			ds.Redacted[id] = n
		}
		for _, g := range st.Diagnostics {
			ds.Diagnostics = append(ds.Diagnostics, Diagnostic{
				Level: string(g.Level), Source: g.Source, Message: g.Message, AtMS: sinceStart(g.At),
			})
		}
		tr.Statuses = append(tr.Statuses, ds)
		tr.Totals.ChildThreads++
		tr.Totals.Delivered += ds.Delivered
		tr.Totals.Dropped = tr.Totals.Dropped.Plus(st.Dropped)
	}

	for _, n := range tr.Notifications {
		if n.Summary {
			tr.Totals.Summaries++
			tr.Totals.NotShown += len(n.HeldBack)
		} else {
			tr.Totals.NotificationsShown++
		}
	}
}
