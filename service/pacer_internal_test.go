package service

import (
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/mailbox"
	"github.com/diagrelay/diagrelay/relay"
)

// A child's pacer is made once, at the first ask, however many ask at
// once, and a nested child's is its top-level child's: nesting does not
// multiply the pace (docs/protocol.md, "Nested children").
func TestPacerSharedAndMadeOnce(t *testing.T) {
	s := New(Config{Mailbox: mailbox.NewMemory()})
	open := func(path string) *relay.Runtime {
		rt, err := s.Manager().Open(path, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	tt := newTokenTable(1, 1)
	now := time.Now()
	top, _ := tt.bind(open("/root/a"), nil, nil, now)
	nested, _ := tt.bind(open("/root/a/b"), top, nil, now)
	other, _ := tt.bind(open("/root/c"), nil, nil, now)
	if top.pace.Load() != nil {
		t.Fatal("a pacer made before any drop")
	}
	var wg sync.WaitGroup
	got := make([]any, 16)
	for i := range got {
		wg.Go(func() {
			if i%2 == 0 {
				got[i] = top.pacer()
			} else {
				got[i] = nested.pacer()
			}
		})
	}
	wg.Wait()
	for i, l := range got {
		if l != got[0] {
			t.Fatalf("ask %d got another pacer", i)
		}
	}
	if nested.pace.Load() != nil {
		t.Error("the nested child made a pacer of its own")
	}
	if other.pacer() == top.pacer() {
		t.Error("two top-level children share a pacer")
	}
}
