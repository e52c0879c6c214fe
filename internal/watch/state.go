package watch

import (
	"sort"
	"strings"
	"time"

	"github.com/diagrelay/diagrelay/internal/ring"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
	"github.com/diagrelay/diagrelay/threadpath"
)

// FeedSize is how many notifications the feed keeps.
const FeedSize = 200

// Thread is what watch knows of one thread. Every string is sanitized.
type Thread struct {
	wire.ThreadInfo
	Diags  []wire.Diagnostic // newest first; valid once Loaded
	Loaded bool              // Diags came from thread.status and events since
}

// Recipient is where the thread's parent messages go (threadpath.Recipient).
func (t *Thread) Recipient() string { return threadpath.Recipient(t.Parent, t.Owner) }

// Note is one line of the notification feed.
type Note struct {
	At    time.Time
	Kind  string // notified, held, summary or lost
	Level string
	Text  string
}

// State is the session as events describe it. It is not safe for
// concurrent use: the Model owns it.
type State struct {
	Threads map[string]*Thread
	Unread  map[string]int  // unacknowledged parent messages per recipient
	AtLeast map[string]bool // Unread[r] is a lower bound (mailbox.read hit its limit)
	Lost    uint64          // events the service could not send us

	feed  ring.Ring[Note] // the newest FeedSize
	rows  []Row
	dirty bool
}

// NewState returns an empty session.
func NewState() *State {
	return &State{Threads: make(map[string]*Thread), Unread: make(map[string]int), AtLeast: make(map[string]bool),
		feed: ring.New[Note](FeedSize), dirty: true}
}

// clean sanitizes a name with no length limit: a thread path may be longer
// than a source, and a cut path would name another thread.
func clean(s string) string { return sanitize.Clean(s, 0) }

func cleanInfo(t wire.ThreadInfo) wire.ThreadInfo {
	t.Path, t.Parent, t.Owner, t.Edge = clean(t.Path), clean(t.Parent), clean(t.Owner), sanitize.Source(t.Edge)
	t.Peer = cleanPeer(t.Peer)
	return t
}

// cleanPeer is a sanitized copy of a bound peer (nil stays nil).
func cleanPeer(p *wire.Peer) *wire.Peer {
	if p == nil {
		return nil
	}
	c := *p
	c.Exe = sanitize.Source(c.Exe)
	return &c
}

func cleanDiag(d wire.Diagnostic) wire.Diagnostic {
	d.Level, d.Source, d.Message = clean(d.Level), sanitize.Source(d.Source), sanitize.Message(d.Message)
	return d
}

// SetThreads replaces what is known of the listed threads.
func (s *State) SetThreads(list []wire.ThreadInfo) {
	for _, ti := range list {
		s.upsert(cleanInfo(ti))
	}
}

func (s *State) upsert(ti wire.ThreadInfo) *Thread {
	t := s.Threads[ti.Path]
	if t == nil {
		t = &Thread{}
		s.Threads[ti.Path] = t
		s.dirty = true
	}
	t.ThreadInfo = ti
	return t
}

// SetStatus loads a thread's diagnostics from thread.status.
func (s *State) SetStatus(st wire.Status) {
	t := s.upsert(cleanInfo(wire.ThreadInfo{Path: st.Path, Parent: st.Parent, Owner: st.Owner,
		Open: st.Open, Generation: st.Generation, Dropped: st.Dropped, Redacted: st.Redacted,
		Peer: st.Peer, Exited: st.Exited, PeerRefused: st.PeerRefused, Edge: st.Edge}))
	n := min(len(st.Diagnostics), wire.StatusDiagnostics)
	t.Diags = make([]wire.Diagnostic, 0, n)
	for i := len(st.Diagnostics) - 1; i >= 0 && len(t.Diags) < n; i-- {
		t.Diags = append(t.Diags, cleanDiag(st.Diagnostics[i]))
	}
	t.Diagnostics = len(st.Diagnostics)
	t.Loaded = true
}

// Apply updates the state with one event.
func (s *State) Apply(ev wire.Event) {
	path := clean(ev.Thread)
	t := s.Threads[path]
	switch ev.Kind {
	case wire.EventOpened, wire.EventReopened:
		if t == nil {
			t = s.upsert(cleanInfo(wire.ThreadInfo{Path: path, Parent: wire.Str(ev.Parent), Owner: wire.Str(ev.Owner)}))
		}
		t.Open, t.Generation = true, ev.Generation
		t.Peer, t.Exited = nil, nil // a new generation's process says hello anew
	case wire.EventExited:
		if t != nil {
			at := ev.At
			t.Exited = &at
			if ev.Peer != nil {
				t.Peer = cleanPeer(ev.Peer)
			}
		}
	case wire.EventClosed:
		if t != nil {
			t.Open = false
		}
	case wire.EventDelivered:
		if t == nil {
			t = s.upsert(wire.ThreadInfo{Path: path, Parent: threadpath.LexicalParent(path)})
		}
		t.Diagnostics = min(t.Diagnostics+1, wire.StatusDiagnostics)
		if ev.Edge != "" {
			t.Edge = sanitize.Source(ev.Edge)
		}
		for id, n := range ev.Redacted {
			if t.Redacted == nil {
				t.Redacted = wire.Redacted{}
			}
			t.Redacted[id] += n
		}
		if t.Loaded {
			d := cleanDiag(wire.Diagnostic{Level: ev.Level, Source: wire.Str(ev.Source), Message: wire.Str(ev.Message), At: ev.At})
			t.Diags = append([]wire.Diagnostic{d}, t.Diags[:min(len(t.Diags), wire.StatusDiagnostics-1)]...)
		}
		if r := t.Recipient(); r != "" {
			s.Unread[r]++ // the relay posts every delivered report; a refresh corrects acks
		}
	case wire.EventDropped:
		if t == nil {
			return
		}
		switch ev.Reason {
		case wire.ReasonDuplicate:
			t.Dropped.Duplicate++
		case wire.ReasonRate:
			t.Dropped.Rate++
		case wire.ReasonCap:
			t.Dropped.Cap++
		case wire.ReasonInvalid:
			t.Dropped.Invalid++
		}
	case wire.EventNotified, wire.EventHeld:
		kind := ev.Kind
		if ev.Kind == wire.EventNotified && ev.Thread == "" {
			kind = "summary"
		}
		s.push(Note{At: ev.At, Kind: kind, Level: clean(ev.NotifyType), Text: sanitize.Message(wire.Str(ev.Message))})
	case wire.EventLost:
		s.Lost += ev.Count
		s.push(Note{At: ev.At, Kind: "lost", Text: "the service dropped " + count(ev.Count, "event") + ": watch did not read them in time"})
	}
}

func (s *State) push(n Note) { s.feed.Push(n) }

// Feed returns up to n notes, newest first.
func (s *State) Feed(n int) []Note { return s.feed.NewestFirst(n) }

// Recipients returns every recipient of a known thread, sorted.
func (s *State) Recipients() []string {
	seen := map[string]bool{}
	for _, t := range s.Threads {
		if r := t.Recipient(); r != "" {
			seen[r] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Row is one line of the session tree.
type Row struct {
	Path  string // "" never; threadpath.Root for the parent session
	Label string // the path relative to the row it hangs under
	Depth int
}

// Rows returns the session tree in display order: the parent session and
// the threads under it, then each independent root (with its owner) and
// its threads. A thread whose lexical parent was never opened hangs under
// its nearest opened ancestor.
func (s *State) Rows() []Row {
	if !s.dirty {
		return s.rows
	}
	kids := make(map[string][]string, len(s.Threads))
	var tops []string
	for p := range s.Threads {
		up := s.anchor(p)
		if up == "" {
			tops = append(tops, p)
		} else {
			kids[up] = append(kids[up], p)
		}
	}
	sort.Strings(tops)
	rows := make([]Row, 0, len(s.Threads)+1)
	var walk func(p string, depth int, under string)
	walk = func(p string, depth int, under string) {
		label := p
		if under != "" {
			label = strings.TrimPrefix(strings.TrimPrefix(p, under), "/")
		}
		rows = append(rows, Row{Path: p, Label: label, Depth: depth})
		ks := kids[p]
		sort.Strings(ks)
		for _, k := range ks {
			walk(k, depth+1, p)
		}
	}
	walk(threadpath.Root, 0, "")
	for _, p := range tops {
		if p != threadpath.Root {
			walk(p, 0, "")
		}
	}
	s.rows, s.dirty = rows, false
	return rows
}

// anchor is the row a path hangs under: its nearest opened ancestor, the
// parent session for paths under it, or "" for a top-level row.
func (s *State) anchor(p string) string {
	if p == threadpath.Root {
		return ""
	}
	for up := threadpath.LexicalParent(p); up != ""; up = threadpath.LexicalParent(up) {
		if _, ok := s.Threads[up]; ok || up == threadpath.Root {
			return up
		}
	}
	return ""
}

// count is "1 thing" or "n things".
func count(n uint64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return itoa(n) + " " + thing + "s"
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
