package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/relay"
)

// 200 child connections report at once over the real socket into the real
// bbolt mailbox (loopback only, bounded in count and time).
func TestLoad200Children(t *testing.T) {
	children := 200
	if testing.Short() {
		children = 40
	}
	e := start(t, relay.ModeRPC)
	tokens := make([]string, children)
	for i := range tokens {
		tokens[i] = e.open(fmt.Sprintf("/root/c%03d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := e.dial(tok)
			for j := range 10 {
				if ctx.Err() != nil {
					return
				}
				p.mustCall("diagnostic.report", map[string]any{"level": "info", "message": fmt.Sprintf("c%03d #%d", i, j)})
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("load did not finish in 60 s")
	}
	total := 0
	for {
		var read struct{ Messages []struct{ ID uint64 } }
		e.host.mustCallInto("mailbox.read", map[string]any{"recipient": "/root"}, &read)
		if len(read.Messages) == 0 {
			break
		}
		ids := make([]uint64, len(read.Messages))
		for i, m := range read.Messages {
			ids[i] = m.ID
		}
		total += len(ids)
		e.host.mustCall("mailbox.ack", map[string]any{"recipient": "/root", "ids": ids})
	}
	if total != children*5 {
		t.Fatalf("%d messages, want %d (5 per child by the window)", total, children*5)
	}
}

// Shutdown finishes the requests in flight: every report that got a reply
// is in the mailbox, and later requests are refused, not lost silently.
func TestShutdownFinishesInFlight(t *testing.T) {
	e := start(t, relay.ModeRPC)
	child := e.dial(e.open("/root/x"))
	child.mustCall("diagnostic.report", map[string]any{"level": "info", "message": "before"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := e.store.Read("/root", 10)
	if err != nil || len(es) != 1 {
		t.Fatalf("after shutdown: %v %v", es, err)
	}
}
