package mailbox

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/diag"
)

func onceMsg(text string) diag.ParentMessage {
	return diag.ParentMessage{Recipient: "/root", From: "/root/a", Text: text, Level: diag.Warning, Message: text,
		At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

// TestPostOnce: an id is stored once, across concurrent posters in one
// commit and across a reopen of the file; forgetting below a sequence
// lets an id be stored again.
func TestPostOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := openStore(t, path)
	var wg sync.WaitGroup
	var stored atomic.Int32
	for range 16 { // the same id from 16 posters: one wins
		wg.Go(func() {
			dup, err := s.PostOnce("edge-1 a.1", 7, onceMsg("one"))
			if err != nil {
				t.Error(err)
			}
			if !dup {
				stored.Add(1)
			}
		})
	}
	wg.Wait()
	if n := stored.Load(); n != 1 {
		t.Fatalf("the same id stored %d times", n)
	}
	if dup, err := s.PostOnce("edge-1 a.2", 9, onceMsg("two")); dup || err != nil {
		t.Fatalf("a new id: dup %v, %v", dup, err)
	}
	s.Close()

	s = openStore(t, path)
	if dup, err := s.PostOnce("edge-1 a.1", 7, onceMsg("one")); !dup || err != nil {
		t.Fatalf("after reopening, a stored id: dup %v, %v", dup, err)
	}
	es, err := s.Read("/root", 10)
	if err != nil || len(es) != 2 || es[0].Message != "one" || es[1].Message != "two" {
		t.Fatalf("read %v, %v", es, err)
	}
	if n, err := s.ForgetOnceThrough(7); n != 1 || err != nil {
		t.Fatalf("forget through 7: %d, %v", n, err)
	}
	if n, _ := s.OnceIDs(); n != 1 {
		t.Fatalf("%d ids kept, want 1", n)
	}
	if dup, _ := s.PostOnce("edge-1 a.2", 9, onceMsg("two")); !dup {
		t.Fatal("an id above the floor was forgotten")
	}
	if _, err := s.PostOnce("", 1, onceMsg("x")); err == nil {
		t.Fatal("an empty id was taken")
	}
	s.Close()
	r, err := Check(path)
	if err != nil || len(r.Problems) != 0 || len(r.Recipients) != 1 {
		t.Fatalf("check of a file with once ids: %+v, %v", r, err)
	}
}

// OnceIDs counts each id once while a checkpoint has written the pending
// ids into the file but not yet dropped them from memory: in the
// background, and in the leader (ForgetOnceThrough's).
func TestOnceIDsDuringCheckpoint(t *testing.T) {
	defer func(at int64) { checkpointAt = at }(checkpointAt)
	checkpointAt = 8 << 10
	s := openStore(t, filepath.Join(t.TempDir(), "mailbox.db"))
	entered, release := make(chan struct{}), make(chan struct{})
	checkpointing = func(stage string) {
		if stage == "committed" {
			checkpointing = nil
			close(entered)
			<-release
		}
	}
	t.Cleanup(func() { checkpointing = nil })
	posted := 0
	for waiting := true; waiting; posted++ {
		if _, err := s.PostOnce(fmt.Sprintf("edge %d", posted), uint64(posted), msg("/root", "/root/x", "m", posted)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-entered:
			waiting = false
		default:
		}
	}
	n, err := s.OnceIDs()
	close(release)
	if err != nil || n != posted {
		t.Fatalf("OnceIDs during a background checkpoint: %d, %v; want %d", n, err, posted)
	}

	var during int
	checkpointing = func(stage string) {
		if stage == "committed" {
			checkpointing = nil
			during, err = s.OnceIDs()
		}
	}
	forgot, ferr := s.ForgetOnceThrough(9)
	if ferr != nil || err != nil || during != posted-forgot || forgot != 10 {
		t.Fatalf("OnceIDs while ForgetOnceThrough checkpoints: %d, %v (forgot %d, %v); want %d", during, err, forgot, ferr, posted-10)
	}
}
