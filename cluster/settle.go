package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// settleWithin bounds how long a home or an edge keeps trying the
// JetStream calls of its start while the cluster settles: a node that just
// restarted, a stream or consumer whose group is electing a leader, answer
// with a timeout or 503 for a few seconds, which is no reason to refuse to
// start.
const settleWithin = 30 * time.Second

// settle calls f until it succeeds, fails for good, or settleWithin has
// passed.
func settle[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(settleWithin)
	for {
		v, err := f(ctx)
		if err == nil || !transient(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return v, err
		}
		sleep(ctx, 250*time.Millisecond)
	}
}

// transient reports whether err is one a settling cluster gives: a
// timeout, nobody answering yet, or JetStream's "temporarily unavailable".
func transient(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoHeartbeat) ||
		(errors.As(err, &api) && api.Code == 503)
}
