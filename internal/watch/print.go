package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/diagrelay/diagrelay/internal/frame"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

// Printer writes the session as lines, for a pipe or a log: first one line
// per thread of thread.list (kind "thread"), then one per event. Plain
// lines are for people; JSON lines (one object each, for jq) carry the
// event's members. Everything is sanitized first, so no line can hold an
// escape sequence or a line break.
type Printer struct {
	W    io.Writer
	JSON bool
	Loc  *time.Location // plain times; nil: local time
}

// Threads prints the initial list.
func (p *Printer) Threads(ts []wire.ThreadInfo) error {
	for _, t := range ts {
		t = cleanInfo(t)
		if p.JSON {
			if err := p.json(struct {
				Kind string `json:"kind"`
				wire.ThreadInfo
			}{"thread", t}); err != nil {
				return err
			}
			continue
		}
		state := "closed"
		if t.Open {
			state = "open"
		}
		line := fmt.Sprintf("thread %s %s gen %d diagnostics %d dropped duplicate %d rate %d cap %d invalid %d redacted %d",
			t.Path, state, t.Generation, t.Diagnostics, t.Dropped.Duplicate, t.Dropped.Rate, t.Dropped.Cap, t.Dropped.Invalid, t.Redacted.Total())
		if t.Owner != "" {
			line += " owner " + t.Owner
		}
		if t.Edge != "" {
			line += " edge " + t.Edge
		}
		line += peerText(t.Peer)
		if t.Exited != nil {
			line += " exited " + p.clock(*t.Exited)
		}
		if t.PeerRefused > 0 {
			line += fmt.Sprintf(" peer_refused %d", t.PeerRefused)
		}
		if _, err := fmt.Fprintln(p.W, line); err != nil {
			return err
		}
	}
	return nil
}

// Event prints one event.
func (p *Printer) Event(ev wire.Event) error {
	ev = cleanEvent(ev)
	if p.JSON {
		return p.json(ev)
	}
	var b strings.Builder
	b.WriteString(p.clock(ev.At))
	b.WriteString(" " + ev.Kind)
	if ev.Thread != "" {
		b.WriteString(" " + ev.Thread)
	}
	switch ev.Kind {
	case wire.EventOpened, wire.EventReopened:
		fmt.Fprintf(&b, " gen %d", ev.Generation)
		if o := wire.Str(ev.Owner); o != "" {
			b.WriteString(" owner " + o)
		}
	case wire.EventClosed:
		fmt.Fprintf(&b, " gen %d", ev.Generation)
	case wire.EventExited:
		fmt.Fprintf(&b, " gen %d%s", ev.Generation, peerText(ev.Peer))
	case wire.EventDelivered:
		b.WriteString(" " + ev.Level)
		// Framed as the notification frames it (internal/frame; docs/decisions.md, "Source frame").
		if src := frame.Source(wire.Str(ev.Source)); src != "" {
			b.WriteString(" [" + src + "]")
		}
		b.WriteString(" " + wire.Str(ev.Message))
		if ev.Edge != "" {
			b.WriteString(" (edge " + ev.Edge + ")")
		}
	case wire.EventDropped:
		b.WriteString(" " + ev.Reason)
	case wire.EventNotified, wire.EventHeld:
		if ev.Thread == "" {
			b.WriteString(" summary")
		}
		b.WriteString(" " + ev.NotifyType + ": " + wire.Str(ev.Message))
	case wire.EventLost:
		b.WriteString(" " + count(ev.Count, "event") + " (watch did not read them in time)")
	}
	b.WriteByte('\n')
	_, err := io.WriteString(p.W, b.String())
	return err
}

// clock is a plain line's time of day, in Loc.
func (p *Printer) clock(t time.Time) string {
	loc := p.Loc
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format("15:04:05.000")
}

// peerText is " peer pid P uid U exe E" for a bound peer, else "".
func peerText(peer *wire.Peer) string {
	if peer == nil {
		return ""
	}
	s := fmt.Sprintf(" peer pid %d uid %d", peer.PID, peer.UID)
	if peer.Exe != "" {
		s += " exe " + peer.Exe
	}
	return s
}

func (p *Printer) json(v any) error {
	enc := json.NewEncoder(p.W)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// cleanEvent sanitizes every string of ev; members absent from it stay
// absent.
func cleanEvent(ev wire.Event) wire.Event {
	for _, s := range []*string{&ev.Kind, &ev.Thread, &ev.Level, &ev.NotifyType, &ev.Reason} {
		*s = clean(*s)
	}
	ev.Peer = cleanPeer(ev.Peer)
	ev.Edge = sanitize.Source(ev.Edge)
	for _, m := range []struct {
		p     **string
		clean func(string) string
	}{{&ev.Parent, clean}, {&ev.Owner, clean}, {&ev.Source, sanitize.Source}, {&ev.Message, sanitize.Message}} {
		if *m.p != nil {
			*m.p = wire.Ptr(m.clean(**m.p))
		}
	}
	return ev
}
