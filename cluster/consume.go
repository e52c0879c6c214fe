package cluster

import (
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/threadpath"
)

// inFlight is how many of the stream's messages the home delivers at once
// (and how many the consumer pulls ahead): they are delivered concurrently,
// so their mailbox writes share commits.
const inFlight = 64

// consume delivers the stream's messages as they arrive until the home
// closes; a message in the middle of delivery then is not acknowledged and
// comes again after the ack wait.
func (h *Home) consume(m *relay.Manager, f Forgetter) {
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	// A callback may still run after cc.Stop: once stopped is set it
	// starts nothing (its message comes again after the ack wait), so no
	// wg.Add races the final wg.Wait.
	var mu sync.Mutex
	stopped := false
	defer func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		wg.Wait()
	}()
	for h.ctx.Err() == nil {
		cc, err := h.cons.Consume(func(msg jetstream.Msg) {
			sem <- struct{}{}
			mu.Lock()
			if stopped {
				mu.Unlock()
				<-sem
				return
			}
			wg.Add(1)
			mu.Unlock()
			go func() {
				defer func() { <-sem; wg.Done() }()
				h.handle(m, msg)
			}()
		}, jetstream.PullMaxMessages(inFlight), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if h.ctx.Err() == nil {
				h.log.Warn("cluster: consuming", "err", err)
			}
		}))
		if err != nil {
			h.log.Warn("cluster: consume failed; retrying", "err", err)
			sleep(h.ctx, 250*time.Millisecond)
			continue
		}
		h.pruneLoop(f)
		cc.Stop()
	}
}

// pruneLoop forgets old report ids and purges the stream's acknowledged
// messages every PruneEvery until the home closes.
func (h *Home) pruneLoop(f Forgetter) {
	t := time.NewTicker(h.PruneEvery)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
			h.prune(f)
		}
	}
}

// prune forgets the ids of reports at or below the consumer's
// acknowledgement floor, which the stream will not deliver again, and
// purges those messages from the stream: the home acknowledged each (after
// its mailbox commit) or terminated it, and it is the stream's only
// consumer. One purge removes them all, where work-queue retention removed
// each at its acknowledgement with a synced write of its own
// (streamRetention).
func (h *Home) prune(f Forgetter) {
	info, err := h.cons.Info(h.ctx)
	if err != nil {
		return
	}
	floor := info.AckFloor.Stream
	if floor == 0 {
		return
	}
	if f != nil {
		if n, err := f.ForgetOnceThrough(floor); err == nil {
			h.stats.pruned.Add(uint64(n))
		}
	}
	if floor > h.purged {
		if err := h.l.stream.Purge(h.ctx, jetstream.WithPurgeSequence(floor+1)); err != nil {
			if h.ctx.Err() == nil {
				h.log.Warn("cluster: purging the acknowledged reports failed; next time", "err", err)
			}
			return
		}
		h.purged = floor
	}
}

// handle delivers one message and settles it with the stream: Ack once
// the report is stored (or was already), Nak to have it again after a
// mailbox failure or while the bucket has not answered for its claim, Term
// for a message that fails a check, which would fail it every time.
func (h *Home) handle(m *relay.Manager, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		h.refuse(msg, "no metadata", err)
		return
	}
	subj := msg.Subject()
	if edge, ok := edgeOf(subj, CountsSubject); ok {
		h.applyCounts(m, msg, meta, edge)
		return
	}
	edge, ok := edgeOf(subj, ReportSubject)
	if !ok {
		h.refuse(msg, "subject", errors.New(subj))
		return
	}
	rep, hash, err := decodeReport(msg.Data())
	if err != nil {
		h.refuse(msg, "report", err)
		return
	}
	e, ok := h.placed(msg, meta, "report", hash, edge, rep.Path)
	if !ok {
		return
	}
	id := msg.Headers().Get(jetstream.MsgIDHeader)
	if id == "" || len(id) > 128 {
		h.refuse(msg, "report", errors.New("no Nats-Msg-Id"))
		return
	}
	dup, err := m.DeliverRemote(relay.RemoteReport{
		ID: edge + " " + id, Seq: meta.Sequence.Stream,
		Path: e.Path, Parent: e.Parent, Owner: e.Owner, Edge: edge,
		Level: rep.Level, Source: rep.Source, Message: rep.Message, At: rep.At,
	})
	switch {
	case errors.Is(err, diag.ErrInvalid), errors.Is(err, threadpath.ErrInvalid):
		h.refuseThread(msg, "report", e.Path, err)
		return
	case err != nil:
		h.stats.retried.Add(1)
		h.log.Error("cluster: a report could not be stored; the stream will deliver it again", "thread", e.Path, "err", err)
		_ = msg.NakWithDelay(time.Second)
		return
	case dup:
		h.stats.duplicates.Add(1)
	default:
		h.stats.delivered.Add(1)
	}
	_ = msg.Ack()
}

func (h *Home) applyCounts(m *relay.Manager, msg jetstream.Msg, meta *jetstream.MsgMetadata, edge string) {
	c, hash, err := decodeCounts(msg.Data())
	if err != nil {
		h.refuse(msg, "counts", err)
		return
	}
	if _, ok := h.placed(msg, meta, "counts", hash, edge, c.Path); !ok {
		return
	}
	m.SetRemoteCounts(c.Path, edge, c.Boot, relay.RemoteCounts{Dropped: c.Dropped, Redacted: c.Redacted})
	h.stats.counts.Add(1)
	_ = msg.Ack()
}

// placed settles a message its entry does not place: Term on proof that
// it never can be, Nak with a backoff while the bucket has not answered
// (place.go). It returns the entry and true for a message to deliver.
func (h *Home) placed(msg jetstream.Msg, meta *jetstream.MsgMetadata, what string, hash [32]byte, edge, path string) (entry, bool) {
	e, v, why := h.place(hash, edge, path, meta.NumDelivered)
	switch v {
	case place:
		return e, true
	case refuse:
		h.refuseThread(msg, what, path, errors.New(why))
	default:
		h.stats.waited.Add(1)
		delay := nakDelay(meta.NumDelivered)
		h.log.Warn("cluster: a message waits for the bucket", "what", what, "thread", path, "edge", edge,
			"reason", why, "delivered", meta.NumDelivered, "again_in", delay)
		_ = msg.NakWithDelay(delay)
	}
	return entry{}, false
}

// refuse terminates a message that fails a check, which it would fail
// every time: counted and logged with the reason.
func (h *Home) refuse(msg jetstream.Msg, what string, err error) {
	h.refuseThread(msg, what, "", err)
}

// refuseThread is refuse for a message whose thread is known: the log
// names it.
func (h *Home) refuseThread(msg jetstream.Msg, what, thread string, err error) {
	h.stats.refused.Add(1)
	args := []any{"what", what, "subject", msg.Subject(), "reason", err}
	if thread != "" {
		args = append(args, "thread", thread)
	}
	h.log.Warn("cluster: message refused", args...)
	_ = msg.Term()
}
