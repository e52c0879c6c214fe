package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestSettle: the start's JetStream calls are tried again on what a
// settling cluster answers, and given up at once on anything else.
func TestSettle(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("cluster: %w", nats.ErrTimeout), true},
		{nats.ErrNoResponders, true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}, true},
		{&jetstream.APIError{Code: 400, ErrorCode: 10058, Description: "stream name already in use with a different configuration"}, false},
		{jetstream.ErrStreamNotFound, false},
		{errors.New("permissions violation"), false},
	} {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	calls := 0
	v, err := settle(t.Context(), func(context.Context) (int, error) {
		calls++
		if calls < 3 {
			return 0, nats.ErrTimeout
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Errorf("settle after two timeouts: %d %v in %d calls", v, err, calls)
	}
	calls = 0
	_, err = settle(t.Context(), func(context.Context) (int, error) { calls++; return 0, jetstream.ErrStreamNotFound })
	if !errors.Is(err, jetstream.ErrStreamNotFound) || calls != 1 {
		t.Errorf("settle on a lasting error: %v in %d calls", err, calls)
	}
}
