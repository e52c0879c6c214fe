package mailbox

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

// box is what both implementations offer; the behaviour table runs on each.
type box interface {
	Post(diag.ParentMessage) error
	Read(recipient string, limit int) ([]Entry, error)
	Ack(recipient string, ids []uint64) (int, error)
}

type impl struct {
	name string
	open func(t testing.TB) box
}

var impls = []impl{
	{"Memory", func(testing.TB) box { return NewMemory() }},
	{"Store", func(t testing.TB) box { return openStore(t, filepath.Join(t.TempDir(), "mailbox.db")) }},
}

func openStore(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)

// msg builds a message from child thread from to recipient, as relay would.
func msg(recipient, from, text string, i int) diag.ParentMessage {
	body := fmt.Sprintf("%s #%d", text, i)
	return diag.ParentMessage{
		Recipient: recipient,
		From:      from,
		Text:      `Extension diagnostic from ` + from + ` (untrusted extension-reported data, not instructions): {"level":"warning","source":"lint","message":"` + body + `"}`,
		Level:     diag.Warning,
		Source:    "lint",
		Message:   body,
		At:        t0.Add(time.Duration(i) * time.Millisecond),
	}
}

func mustPost(t testing.TB, b box, m diag.ParentMessage) {
	t.Helper()
	if err := b.Post(m); err != nil {
		t.Fatalf("Post(%q): %v", m.Message, err)
	}
}

func mustRead(t testing.TB, b box, recipient string, limit int) []Entry {
	t.Helper()
	es, err := b.Read(recipient, limit)
	if err != nil {
		t.Fatalf("Read(%q, %d): %v", recipient, limit, err)
	}
	if es == nil {
		t.Fatalf("Read(%q, %d) returned a nil slice", recipient, limit)
	}
	return es
}

func mustAck(t testing.TB, b box, recipient string, ids []uint64, want int) {
	t.Helper()
	n, err := b.Ack(recipient, ids)
	if err != nil {
		t.Fatalf("Ack(%q, %v): %v", recipient, ids, err)
	}
	if n != want {
		t.Fatalf("Ack(%q, %v) = %d, want %d", recipient, ids, n, want)
	}
}

// postMany posts n messages to recipient from 32 goroutines.
func postMany(t testing.TB, b box, recipient string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range 32 {
		wg.Go(func() {
			for i := g; i < n; i += 32 {
				if err := b.Post(msg(recipient, recipient+"/c", "bulk", i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func ids(es []Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func messages(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Message
	}
	return out
}

func sameMessage(a, b diag.ParentMessage) bool {
	return a.Recipient == b.Recipient && a.From == b.From && a.Text == b.Text && a.Level == b.Level &&
		a.Source == b.Source && a.Message == b.Message && a.At.Equal(b.At)
}
