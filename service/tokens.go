package service

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/diagrelay/diagrelay/relay"
)

// NewToken returns 32 random bytes, hex-encoded.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// binding is what a child token grants: one runtime generation. It is
// revoked when that generation ends (reopen or close).
type binding struct {
	rt      *relay.Runtime // nil in a revoked token's tombstone
	path    string
	token   string
	revoked atomic.Bool
	// conns are the live connections holding the token, at most
	// Config.MaxConnsPerChild; guarded by tokenTable.mu. A slice, grown as
	// they come: most children hold one connection, and a map made for
	// the four allowed was 180 bytes a thread.
	conns []*conn
	// pace spaces out the reports of a child whose reports the gate is
	// dropping (see conn.paceDropped); shared by its connections and its
	// nested children, so only top's is used. Made at the first drop
	// (pacer): most children never have one, and 10,000 of them held
	// 0.8 MB of limiters.
	pace atomic.Pointer[rate.Limiter]
	// cost is the child's share of the server's work (cost.go), shared
	// by its connections.
	cost *costBucket
	// opened holds the live bindings this generation's connections opened
	// as nested children (nested.go); guarded by tokenTable.mu.
	opened   map[*binding]struct{}
	openedBy *binding // the nested child's generation that opened this one; nil: the host
	// top is the top-level child this one is nested in (itself when the
	// host opened it): its cost and pace are top's, and it counts in
	// top's nested, the live threads below a top-level child
	// (--max-nested). counted is the count it takes part in, until its
	// revocation; nil for a top-level child.
	top     *binding
	nested  nestedCount
	counted *nestedCount
	// spawned: opened with a spawn token by the process it is bound to
	// (spawn.go); its thread closes when that process exits.
	spawned bool
	// bound, if not nil, is the process the token is bound to (bind.go).
	bound *boundPeer

	// gen is the generation a hello answers: rt's, or on a cluster edge
	// the home's (directory.go). claimed: the cluster's directory has
	// this server's claim on the token (guarded by tokenTable.mu).
	gen     uint64
	claimed bool
}

// Pacing of dropped reports, per child token: after a burst of
// PaceDroppedBurst dropped reports, the child's next frame is read no
// sooner than 1/PaceDroppedRate after the previous dropped one. Admitted
// reports are never paced, and the gate admits at most a few per window,
// so pacing loses a flooding child nothing it would have delivered.
const (
	PaceDroppedRate  rate.Limit = 200
	PaceDroppedBurst            = 50
)

// nestedCount is how many live threads a top-level child holds below it
// (Config.MaxNested); guarded by tokenTable.mu.
type nestedCount struct{ live int }

// tokenTable maps tokens to bindings. It is keyed by the SHA-256 of the
// token, so a lookup's timing depends on the digest, not on how many leading
// bytes of a guess were right; the final check is constant-time.
type tokenTable struct {
	costRate, costBurst float64 // each binding's share (cost.go)

	onRevoke func(hash [32]byte) // Directory.Revoked, or nil; called under mu

	mu     sync.Mutex
	byHash map[[32]byte]*binding
	byPath map[string]*binding // the live binding of each open path
	// The spawn tokens (spawn.go): by hash, and by the path they open
	// below.
	spawnByHash map[[32]byte]*spawnGrant
	spawnByPath map[string]*spawnGrant
}

func newTokenTable(costRate, costBurst float64) *tokenTable {
	return &tokenTable{costRate: costRate, costBurst: costBurst,
		byHash: make(map[[32]byte]*binding), byPath: make(map[string]*binding),
		spawnByHash: make(map[[32]byte]*spawnGrant), spawnByPath: make(map[string]*spawnGrant)}
}

// bind records a new generation's token, opened by opener (nil: the
// host) and bound to a process if bound is not nil, and revokes the
// path's previous one, which it returns (or nil).
func (t *tokenTable) bind(rt *relay.Runtime, opener *binding, bound *boundPeer, now time.Time) (b, old *binding) {
	return t.bindToken(rt, NewToken(), opener, nil, bound, now)
}

// bindToken is bind with the token given: a cluster edge's, issued by the
// home (directory.go). A top-level child opened with a spawn token
// (spawn.go) counts in that token's spawned, nil otherwise.
func (t *tokenTable) bindToken(rt *relay.Runtime, token string, opener *binding, spawned *nestedCount, bound *boundPeer, now time.Time) (b, old *binding) {
	b = &binding{rt: rt, path: rt.Path(), token: token, bound: bound, gen: rt.Generation()}
	if opener != nil {
		// A nested token draws on its top-level child's share: nesting
		// multiplies neither the share nor the pace (docs/protocol.md,
		// "Nested children").
		b.top = opener.top
		b.cost = b.top.cost
	} else {
		b.top = b
		b.cost = newCostBucket(t.costRate, t.costBurst, now)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old = t.byPath[rt.Path()]; old != nil {
		t.revokeLocked(old)
	}
	switch {
	case opener != nil:
		b.counted = &b.top.nested
	case spawned != nil:
		b.counted, b.spawned = spawned, true
	}
	if b.counted != nil {
		b.counted.live++
	}
	t.byPath[rt.Path()] = b
	t.byHash[sha256.Sum256([]byte(b.token))] = b
	if opener != nil {
		if opener.opened == nil {
			opener.opened = make(map[*binding]struct{})
		}
		opener.opened[b] = struct{}{}
		b.openedBy = opener
	}
	return b, old
}

// pacer returns the child's limiter of dropped reports (top's), made the
// first time it is asked for.
func (b *binding) pacer() *rate.Limiter {
	top := b.top
	if l := top.pace.Load(); l != nil {
		return l
	}
	top.pace.CompareAndSwap(nil, rate.NewLimiter(PaceDroppedRate, PaceDroppedBurst))
	return top.pace.Load()
}

// nestedRoom reports whether opener's top-level child may hold one more
// live thread below it, at most max, once path's live binding (which
// opening path revokes) no longer counts. Called with Server.openMu held,
// so no other open comes between it and bind.
func (t *tokenTable) nestedRoom(opener *binding, path string, max int) bool {
	return t.room(&opener.top.nested, path, max)
}

// room reports whether count may take one more live thread, at most max,
// once path's live binding no longer counts. openMu held.
func (t *tokenTable) room(n *nestedCount, path string, max int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := n.live
	if old := t.byPath[path]; old != nil && old.counted == n {
		live--
	}
	return live < max
}

// takeOpened returns the bindings b's generation opened and forgets them.
func (t *tokenTable) takeOpened(b *binding) []*binding {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*binding, 0, len(b.opened))
	for nb := range b.opened {
		out = append(out, nb)
	}
	b.opened = nil
	return out
}

// revokeIfLive revokes b if it is still its path's live binding (not
// replaced by a reopen, nor closed), and reports whether it did.
func (t *tokenTable) revokeIfLive(b *binding) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byPath[b.path] != b {
		return false
	}
	t.revokeLocked(b)
	delete(t.byPath, b.path)
	return true
}

// lookup returns the binding for token, or nil.
func (t *tokenTable) lookup(token string) *binding {
	h := sha256.Sum256([]byte(token))
	t.mu.Lock()
	b := t.byHash[h]
	t.mu.Unlock()
	if b == nil || subtle.ConstantTimeCompare([]byte(b.token), []byte(token)) != 1 {
		return nil
	}
	return b
}

// revokePath revokes the path's live binding and returns it, or nil.
func (t *tokenTable) revokePath(path string) *binding {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.byPath[path]
	if b != nil {
		t.revokeLocked(b)
		delete(t.byPath, path)
	}
	return b
}

// attach counts c as holding b, unless b already has max connections, is
// revoked, or its bound process has exited.
func (t *tokenTable) attach(b *binding, c *conn, max int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b.revoked.Load() || len(b.conns) >= max || b.exitedLocked() {
		return false
	}
	if !slices.Contains(b.conns, c) {
		b.conns = append(b.conns, c)
	}
	return true
}

// detach forgets that c holds b, and reports whether that was the last
// connection of a live token.
func (t *tokenTable) detach(b *binding, c *conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.Index(b.conns, c)
	held := i >= 0
	if held {
		last := len(b.conns) - 1
		b.conns[i] = b.conns[last]
		b.conns[last] = nil
		b.conns = b.conns[:last]
	}
	return held && len(b.conns) == 0 && !b.revoked.Load()
}

// exitedLocked reports whether b's bound process has exited.
func (b *binding) exitedLocked() bool {
	if b.bound == nil {
		return false
	}
	b.bound.mu.Lock()
	defer b.bound.mu.Unlock()
	return b.bound.exited
}

// markExited records that b's bound process exited and returns the
// connections holding b, or nil when b was revoked or marked already.
func (t *tokenTable) markExited(b *binding) []*conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	bp := b.bound
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if b.revoked.Load() || bp.exited || bp.stopped {
		return nil
	}
	bp.exited = true
	return append(make([]*conn, 0, len(b.conns)), b.conns...) // not nil: marked now
}

// revokeLocked marks b revoked and ends every connection holding it after
// the request it has in flight. The table keeps only a tombstone (path and
// token, no runtime), so a late hello is told "revoked" rather than
// "unknown" at a cost of about 200 bytes per past generation.
func (t *tokenTable) revokeLocked(b *binding) {
	b.revoked.Store(true)
	if b.bound != nil {
		b.bound.stopLocked()
	}
	if b.counted != nil {
		b.counted.live--
		b.counted = nil
	}
	if b.openedBy != nil { // its opener no longer needs to close it
		delete(b.openedBy.opened, b)
		b.openedBy = nil
	}
	for _, c := range b.conns {
		c.revoke() // does not block: sets a flag and a read deadline
	}
	tomb := &binding{path: b.path, token: b.token}
	tomb.revoked.Store(true)
	h := sha256.Sum256([]byte(b.token))
	t.byHash[h] = tomb
	if t.onRevoke != nil {
		t.onRevoke(h)
	}
}

// byHashLive returns the live binding whose token has this hash, or nil.
func (t *tokenTable) byHashLive(h [32]byte) *binding {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.byHash[h]; b != nil && b.rt != nil && !b.revoked.Load() {
		return b
	}
	return nil
}

// equalToken compares two tokens in constant time.
func equalToken(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
