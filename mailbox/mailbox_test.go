package mailbox

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// behaviours is the contract of doc.go, run against every implementation.
var behaviours = []struct {
	name string
	fn   func(t *testing.T, b box)
}{
	{"EmptyReadIsEmptyNotNil", func(t *testing.T, b box) {
		es := mustRead(t, b, "/root", 0)
		if len(es) != 0 {
			t.Fatalf("got %d entries", len(es))
		}
		if j, _ := json.Marshal(es); string(j) != "[]" {
			t.Fatalf("JSON %s, want []", j)
		}
		mustRead(t, b, "", 10)
	}},
	{"PostReadRoundTripOldestFirst", func(t *testing.T, b box) {
		var sent []diag.ParentMessage
		for i := range 5 {
			m := msg("/root", "/root/x", "hello", i)
			m.At = m.At.In(time.FixedZone("X", 3600)) // any zone; read back in UTC
			sent = append(sent, m)
			mustPost(t, b, m)
		}
		es := mustRead(t, b, "/root", 0)
		if len(es) != len(sent) {
			t.Fatalf("got %d entries, want %d", len(es), len(sent))
		}
		for i, e := range es {
			if !sameMessage(e.ParentMessage, sent[i]) {
				t.Errorf("entry %d = %+v, want %+v", i, e.ParentMessage, sent[i])
			}
			if e.At.Location() != time.UTC || e.At != sent[i].At.UTC() {
				t.Errorf("entry %d time %#v, want %v in UTC without monotonic reading", i, e.At, sent[i].At)
			}
			if i > 0 && e.ID <= es[i-1].ID {
				t.Errorf("ids not increasing: %v", ids(es))
			}
		}
	}},
	{"MonotonicReadingDropped", func(t *testing.T, b box) {
		m := msg("/root", "/root/x", "now", 0)
		m.At = time.Now() // has a monotonic reading; only its wall time is kept
		mustPost(t, b, m)
		got := mustRead(t, b, "/root", 1)[0].At
		if got != m.At.Round(0).UTC() {
			t.Fatalf("At = %#v, want %#v", got, m.At.Round(0).UTC())
		}
	}},
	{"ReadDoesNotConsume", func(t *testing.T, b box) {
		for i := range 3 {
			mustPost(t, b, msg("/root", "/root/x", "m", i))
		}
		first := mustRead(t, b, "/root", 0)
		second := mustRead(t, b, "/root", 0)
		if !slices.Equal(ids(first), ids(second)) || len(first) != 3 {
			t.Fatalf("reads differ: %v then %v", ids(first), ids(second))
		}
	}},
	{"RecipientsAreSeparate", func(t *testing.T, b box) {
		mustPost(t, b, msg("/root", "/root/x", "to root", 0))
		mustPost(t, b, msg("/k", "/k/l", "to k", 1))
		mustPost(t, b, msg("/root", "/k", "to root from k", 2))
		root, k := mustRead(t, b, "/root", 0), mustRead(t, b, "/k", 0)
		if got := messages(root); !slices.Equal(got, []string{"to root #0", "to root from k #2"}) {
			t.Fatalf("/root got %q", got)
		}
		if got := messages(k); !slices.Equal(got, []string{"to k #1"}) {
			t.Fatalf("/k got %q", got)
		}
		all := append(ids(root), ids(k)...)
		slices.Sort(all)
		if len(slices.Compact(all)) != 3 {
			t.Fatalf("ids not unique across recipients: %v %v", ids(root), ids(k))
		}
		if len(mustRead(t, b, "/root/x", 0)) != 0 || len(mustRead(t, b, "/ROOT", 0)) != 0 {
			t.Fatal("a recipient's messages visible under another name")
		}
	}},
	{"Limits", func(t *testing.T, b box) {
		for i := range 10 {
			mustPost(t, b, msg("/root", "/root/x", "m", i))
		}
		if got := messages(mustRead(t, b, "/root", 3)); !slices.Equal(got, []string{"m #0", "m #1", "m #2"}) {
			t.Fatalf("limit 3 got %q", got)
		}
		if got := len(mustRead(t, b, "/root", 1)); got != 1 {
			t.Fatalf("limit 1 got %d", got)
		}
		for _, limit := range []int{0, -1, -1 << 62, 10, 11, 1 << 62} {
			if got := len(mustRead(t, b, "/root", limit)); got != 10 {
				t.Fatalf("limit %d got %d entries, want all 10", limit, got)
			}
		}
	}},
	{"DefaultAndMaxLimit", func(t *testing.T, b box) {
		postMany(t, b, "/root", MaxReadLimit+5)
		if got := len(mustRead(t, b, "/root", 0)); got != DefaultReadLimit {
			t.Fatalf("limit 0 got %d, want %d", got, DefaultReadLimit)
		}
		if got := len(mustRead(t, b, "/root", -7)); got != DefaultReadLimit {
			t.Fatalf("limit -7 got %d, want %d", got, DefaultReadLimit)
		}
		es := mustRead(t, b, "/root", MaxReadLimit*3)
		if len(es) != MaxReadLimit {
			t.Fatalf("limit %d got %d, want %d", MaxReadLimit*3, len(es), MaxReadLimit)
		}
		if !slices.IsSorted(ids(es)) {
			t.Fatal("not oldest first")
		}
		rest := mustRead(t, b, "/root", MaxReadLimit+5)
		if len(rest) != MaxReadLimit || !slices.Equal(ids(rest), ids(es)) {
			t.Fatal("a second read returned different entries")
		}
		mustAck(t, b, "/root", ids(es), MaxReadLimit)
		if got := len(mustRead(t, b, "/root", 0)); got != 5 {
			t.Fatalf("after acking %d, %d left, want 5", MaxReadLimit, got)
		}
	}},
	{"AckOwnIds", func(t *testing.T, b box) {
		for i := range 6 {
			mustPost(t, b, msg("/root", "/root/x", "m", i))
		}
		es := mustRead(t, b, "/root", 0)
		// Ack the 2nd and 5th, with a repeat: counted once each.
		mustAck(t, b, "/root", []uint64{es[1].ID, es[4].ID, es[1].ID}, 2)
		if got := messages(mustRead(t, b, "/root", 0)); !slices.Equal(got, []string{"m #0", "m #2", "m #3", "m #5"}) {
			t.Fatalf("after ack got %q", got)
		}
		mustAck(t, b, "/root", []uint64{es[1].ID, es[4].ID}, 0) // already acknowledged
		mustAck(t, b, "/root", nil, 0)
		mustAck(t, b, "/root", []uint64{}, 0)
		// Ids in descending order are fine.
		mustAck(t, b, "/root", []uint64{es[5].ID, es[3].ID, es[2].ID, es[0].ID}, 4)
		if got := len(mustRead(t, b, "/root", 0)); got != 0 {
			t.Fatalf("%d left after acking all", got)
		}
	}},
	{"AckIgnoresForeignAndUnknownIds", func(t *testing.T, b box) {
		mustPost(t, b, msg("/root", "/root/x", "root's", 0))
		mustPost(t, b, msg("/k", "/k/l", "k's", 1))
		rootIDs := ids(mustRead(t, b, "/root", 0))
		kIDs := ids(mustRead(t, b, "/k", 0))
		mustAck(t, b, "/k", rootIDs, 0)
		mustAck(t, b, "/root/x", rootIDs, 0)
		mustAck(t, b, "", rootIDs, 0)
		mustAck(t, b, "/root", []uint64{0, kIDs[0], 1 << 63, ^uint64(0), rootIDs[0] + 100}, 0)
		if len(mustRead(t, b, "/root", 0)) != 1 || len(mustRead(t, b, "/k", 0)) != 1 {
			t.Fatal("a foreign or unknown id removed something")
		}
		mustAck(t, b, "/root", append(kIDs, rootIDs...), 1)
		if len(mustRead(t, b, "/k", 0)) != 1 {
			t.Fatal("/k's message removed by /root's ack")
		}
	}},
	{"IdsNeverReused", func(t *testing.T, b box) {
		mustPost(t, b, msg("/root", "/root/x", "m", 0))
		first := mustRead(t, b, "/root", 0)[0].ID
		mustAck(t, b, "/root", []uint64{first}, 1)
		mustPost(t, b, msg("/root", "/root/x", "m", 1))
		if second := mustRead(t, b, "/root", 0)[0].ID; second <= first {
			t.Fatalf("id %d after acked id %d", second, first)
		}
	}},
	{"InvalidPostsStoreNothing", func(t *testing.T, b box) {
		bad := map[string]diag.ParentMessage{}
		m := msg("", "/root/x", "m", 0)
		bad["no recipient"] = m
		m = msg(strings.Repeat("r", MaxRecipientBytes+1), "/root/x", "m", 0)
		bad["long recipient"] = m
		m = msg("/root", "/root/x", "m", 0)
		m.Message = strings.Repeat("x", MaxMessageBytes)
		bad["too big"] = m
		m = msg("/root", "/root/x", "m", 0)
		m.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		bad["year 10000"] = m
		m = msg("/root", "/root/x", "m", 0)
		m.At = time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC)
		bad["year -1"] = m
		for name, m := range bad {
			if err := b.Post(m); err == nil {
				t.Errorf("%s: Post accepted it", name)
			} else if !strings.HasPrefix(err.Error(), "mailbox: ") {
				t.Errorf("%s: error %q lacks the package prefix", name, err)
			}
		}
		if got := len(mustRead(t, b, "/root", 0)); got != 0 {
			t.Fatalf("%d invalid messages stored", got)
		}
		// The limits are inclusive: the largest valid message is stored.
		m = msg(strings.Repeat("r", MaxRecipientBytes), "", "", 0)
		m.Text, m.Level, m.Source = "", "", ""
		m.Message = strings.Repeat("é", (MaxMessageBytes-MaxRecipientBytes)/2)
		mustPost(t, b, m)
		m.At = time.Time{} // year 1: representable
		mustPost(t, b, m)
		es := mustRead(t, b, m.Recipient, 0)
		if len(es) != 2 || !sameMessage(es[0].ParentMessage, diag.ParentMessage{Recipient: m.Recipient, Message: m.Message, At: t0}) || !es[1].At.IsZero() {
			t.Fatalf("largest message not stored intact: %d entries", len(es))
		}
	}},
	{"ArbitraryBytesKept", func(t *testing.T, b box) {
		// The mailbox stores what relay gives it; it is not a sanitizer.
		m := diag.ParentMessage{Recipient: "/r\x00\xff", From: "\x1b[31m", Text: "\xc3", Level: "weird", Message: "\u202e", At: t0}
		mustPost(t, b, m)
		es := mustRead(t, b, m.Recipient, 0)
		if len(es) != 1 || !sameMessage(es[0].ParentMessage, m) {
			t.Fatalf("got %+v", es)
		}
	}},
	{"Concurrent", func(t *testing.T, b box) {
		recipients := []string{"/root", "/k", "/root/a"}
		const posters, each = 8, 40
		var wg sync.WaitGroup
		for p := range posters {
			wg.Go(func() {
				for i := range each {
					r := recipients[(p+i)%len(recipients)]
					if err := b.Post(msg(r, fmt.Sprintf("%s/c%d", r, p), fmt.Sprintf("p%d", p), i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		// Readers ack what they read while posts go on; each message must be
		// acknowledged exactly once in total.
		var mu sync.Mutex
		seen := map[uint64]string{}
		acked := 0
		done := make(chan struct{})
		var readers sync.WaitGroup
		for _, r := range recipients {
			for range 2 {
				readers.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(len(r)), 1))
					for {
						select {
						case <-done:
							return
						default:
						}
						es, err := b.Read(r, 1+rng.IntN(20))
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						for _, e := range es {
							if e.Recipient != r {
								t.Errorf("read %q's entry under %q", e.Recipient, r)
							}
							key := e.From + "|" + e.Message
							if prev, ok := seen[e.ID]; ok && prev != key {
								t.Errorf("id %d is both %q and %q", e.ID, prev, key)
							}
							seen[e.ID] = key
						}
						mu.Unlock()
						n, err := b.Ack(r, ids(es))
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						acked += n
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		close(done)
		readers.Wait()
		left := 0
		for _, r := range recipients {
			es := mustRead(t, b, r, MaxReadLimit)
			left += len(es)
			mustAck(t, b, r, ids(es), len(es))
		}
		if acked+left != posters*each {
			t.Fatalf("acked %d + left %d != posted %d", acked, left, posters*each)
		}
	}},
}

func TestBehaviour(t *testing.T) {
	for _, im := range impls {
		for _, bh := range behaviours {
			t.Run(im.name+"/"+bh.name, func(t *testing.T) {
				t.Parallel()
				bh.fn(t, im.open(t))
			})
		}
	}
}
