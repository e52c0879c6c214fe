package wire

import (
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// Params. Absent params count as {}; members not named here are ignored
// by the server.

// HelloParams are session.hello's.
type HelloParams struct {
	Token string `json:"token"`
}

// OpenParams are runtime.open's. Parent and Owner are optional: "" is the
// same as absent (a parent is the lexical one anyway).
type OpenParams struct {
	Path   string `json:"path"`
	Parent string `json:"parent,omitempty"`
	Owner  string `json:"owner,omitempty"`
	// Bind binds the token to the first process that says hello with it
	// and its descendants; nil is the server's default (serve --bind-peer).
	Bind *bool `json:"bind,omitempty"`
}

// PathParams are runtime.close's and thread.status's.
type PathParams struct {
	Path string `json:"path"`
}

// SpawnOpenParams are spawn.open's: the spawn token, and the thread to
// open with it.
type SpawnOpenParams struct {
	Token string `json:"token"`
	Path  string `json:"path"`
}

// ReadParams are mailbox.read's; a nil Limit reads the most a page holds.
type ReadParams struct {
	Recipient string `json:"recipient"`
	Limit     *int   `json:"limit,omitempty"`
}

// AckParams are mailbox.ack's; IDs is required (nil is an error, an empty
// array acks nothing).
type AckParams struct {
	Recipient string    `json:"recipient"`
	IDs       *[]uint64 `json:"ids"`
}

// ReportParams are a child's report. Pointers tell absent or null from "";
// Source may be left out.
type ReportParams struct {
	Level   *string `json:"level"`
	Message *string `json:"message"`
	Source  *string `json:"source,omitempty"`
}

// Empty is the params that take no members (thread.list,
// events.subscribe) and the {} result.
type Empty struct{}

// Results.

// Roles in a hello result.
const (
	RoleHost  = "host"
	RoleChild = "child"
)

// HostHello is session.hello's result for the host token.
type HostHello struct {
	Role string `json:"role"` // RoleHost
}

// ChildHello is session.hello's result for a child token: the runtime it
// is bound to.
type ChildHello struct {
	Role       string `json:"role"` // RoleChild
	Path       string `json:"path"`
	Generation uint64 `json:"generation"`
}

// OpenResult is runtime.open's: the token the child must say hello with.
type OpenResult struct {
	Path       string `json:"path"`
	Token      string `json:"token"`
	Generation uint64 `json:"generation"`
}

// SpawnToken is spawn.token's: a token that opens threads below Path,
// from the host's process's descendants only (spawn.open).
type SpawnToken struct {
	Path  string `json:"path"`
	Token string `json:"token"`
}

// StatusDiagnostics is how many delivered reports a Status holds at most,
// the newest (docs/protocol.md): what a viewer keeps when it adds an
// event's report to a status. It is relay.MaxStatusDiagnostics, which a
// test of package service checks, so that a viewer need not link the relay.
const StatusDiagnostics = 20

// Status is thread.status's: the thread and its latest diagnostics.
type Status struct {
	Path        string       `json:"path"`
	Parent      string       `json:"parent"`
	Owner       string       `json:"owner"`
	Open        bool         `json:"open"`
	Generation  uint64       `json:"generation"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Dropped     Dropped      `json:"dropped"`
	Redacted    Redacted     `json:"redacted"`
	// Peer is the bound process of the latest generation, once it said
	// hello; Exited is when it exited (absent while it lives); PeerRefused
	// counts hellos its binding refused, over all generations (absent
	// while 0, so an unbound thread's status has none of the three).
	Peer        *Peer      `json:"peer,omitempty"`
	Exited      *time.Time `json:"exited,omitempty"`
	PeerRefused uint64     `json:"peer_refused,omitempty"`
	// Edge names the cluster edge that serves the thread's child, on a
	// cluster's home (docs/cluster.md); absent for a local thread.
	Edge string `json:"edge,omitempty"`
}

// Redacted counts the secrets redacted from a thread's delivered reports,
// by rule id ({} when none; docs/redaction.md). It is diag.Redacted, the
// module's one type of this count.
type Redacted = diag.Redacted

// Peer is a bound token's process: its pid and uid, and its executable's
// real path, sanitized as a source is ("" when the system does not say).
type Peer struct {
	PID int    `json:"pid"`
	UID uint32 `json:"uid"`
	Exe string `json:"exe"`
}

// Diagnostic is one entry of Status.Diagnostics.
type Diagnostic struct {
	Level   string    `json:"level"`
	Source  string    `json:"source"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// Dropped counts a thread's reports that the gate did not deliver, by
// reason; the member names are the Reason* values of a dropped event. It
// is diag.Dropped, the module's one type of these counters, whose JSON
// tags are the protocol's.
type Dropped = diag.Dropped

// Drop reasons, the "reason" of a dropped event.
const (
	ReasonDuplicate = "duplicate"
	ReasonRate      = "rate"
	ReasonCap       = "cap"
	ReasonInvalid   = "invalid"
)

// Threads is thread.list's result.
type Threads struct {
	Threads []ThreadInfo `json:"threads"`
}

// ThreadInfo is one entry of thread.list: Status without the diagnostics,
// which it counts.
type ThreadInfo struct {
	Path        string   `json:"path"`
	Parent      string   `json:"parent"`
	Owner       string   `json:"owner"`
	Open        bool     `json:"open"`
	Generation  uint64   `json:"generation"`
	Diagnostics int      `json:"diagnostics"`
	Dropped     Dropped  `json:"dropped"`
	Redacted    Redacted `json:"redacted"`
	// Peer, Exited, PeerRefused and Edge are Status's.
	Peer        *Peer      `json:"peer,omitempty"`
	Exited      *time.Time `json:"exited,omitempty"`
	PeerRefused uint64     `json:"peer_refused,omitempty"`
	Edge        string     `json:"edge,omitempty"`
}

// Page is mailbox.read's result.
type Page struct {
	Messages []Message `json:"messages"`
	// Damaged lists, only when there are some, the ids of records that
	// failed their checksum or decoding: never served, removed by ack.
	Damaged []uint64 `json:"damaged,omitempty"`
}

// Message is one parent-mailbox message.
type Message struct {
	ID        uint64    `json:"id"`
	Recipient string    `json:"recipient"`
	From      string    `json:"from"`
	Text      string    `json:"text"`
	Level     string    `json:"level"`
	Source    string    `json:"source"`
	Message   string    `json:"message"`
	At        time.Time `json:"at"`
}

// AckResult is mailbox.ack's: how many of the ids were removed.
type AckResult struct {
	Acked int `json:"acked"`
}

// Probe is the result of capabilities.probe and diagnostic.probe.
type Probe struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
}
